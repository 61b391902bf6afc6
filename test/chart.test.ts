// The Kubernetes delivery, checked without a cluster or a Docker daemon:
// - deploy/helm/check.sh (helm lint, helm template of every ci/ values file and the dev values, every
//   object against the Kubernetes schemas) passes; it installs Helm and the schemas when missing;
// - every route of docs/api.md#routes reaches the right Deployment through the rendered Ingresses, Services and
//   container ports (ingress-nginx matching rules);
// - values.schema.json covers every value and refuses bad ones; the chart's cross-value checks fire;
// - each Deployment's environment, exactly as rendered, starts the real compiled service against the
//   local Postgres/Redis/Kafka and it becomes ready on its probe paths (names and formats of every
//   variable match the services' config specs); the migrations Job's environment runs setup.js;
// - the dashboard, the alert rules and docs/observability.md use only the metrics of
//   libs/observability/src/metric-names.ts (test/prometheus.test.ts checks them on a real Prometheus);
// - the Dockerfile's stages, user and entry points match the package layout.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { openapi } from '@bus/schemas';
import { RETENTION_WINDOWS } from '@bus/queue';
import { METRICS } from '@bus/observability';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { parseManagedApps } from '@bus/gateway';
import {
  BUS_NODE_FLAGS,
  createOpenApiChecker,
  createTestDatabase,
  fetchObserved,
  freePort,
  startNodeProcess,
  waitForHttp,
  type ServiceProcess,
} from '@bus/testing';

const ROOT = path.resolve(__dirname, '..');
const CHART = path.join(ROOT, 'charts', 'message-bus');
const HELM = path.join(ROOT, '.local', 'bin', 'helm');
const RENDERED = path.join(ROOT, '.local', 'helm', 'test-rendered');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type K8s = any;

function load(file: string): K8s[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS())
    .filter((o) => o != null);
}

const renders: Record<string, K8s[]> = {};
const ENVIRONMENTS = ['sandbox', 'preview'];

beforeAll(() => {
  // Installs helm (go install) and kubernetes-validate (PyPI) when missing: minutes on a fresh clone.
  try {
    execFileSync('bash', [path.join(ROOT, 'deploy', 'helm', 'check.sh'), '--out', RENDERED], { cwd: ROOT, stdio: 'pipe', timeout: 20 * 60_000 });
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer };
    throw new Error(`deploy/helm/check.sh failed:\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`, { cause: err });
  }
  for (const file of readdirSync(RENDERED)) {
    if (file.endsWith('.yaml')) renders[file.replace(/\.yaml$/, '')] = load(path.join(RENDERED, file));
  }
}, 25 * 60_000);

function objects(env: string, kind: string): K8s[] {
  const all = renders[env];
  if (!all) throw new Error(`no render for ${env}`);
  return all.filter((o) => o.kind === kind);
}

function one(env: string, kind: string, name: string): K8s {
  const found = objects(env, kind).find((o) => o.metadata.name === name);
  if (!found) throw new Error(`${env}: no ${kind} ${name}`);
  return found;
}

/** helm template with the sandbox values plus overrides; returns the exit status and output. */
function helmTemplate(args: string[]): { ok: boolean; output: string } {
  try {
    const out = execFileSync(HELM, ['template', 'message-bus', CHART, '-f', path.join(CHART, 'ci', 'sandbox-values.yaml'), ...args], { stdio: 'pipe' });
    return { ok: true, output: out.toString() };
  } catch (err) {
    const e = err as { stderr?: Buffer };
    return { ok: false, output: e.stderr?.toString() ?? '' };
  }
}

describe('deploy/helm/check.sh', () => {
  it('renders every environment and the dev values, each validated against the Kubernetes schemas', () => {
    expect(Object.keys(renders).sort()).toEqual(expect.arrayContaining(['dev', 'inline-secrets', 'preview', 'sandbox']));
    for (const env of ENVIRONMENTS) {
      const kinds = new Set(renders[env]!.map((o) => o.kind));
      for (const kind of [
        'Deployment',
        'Service',
        'Ingress',
        'HorizontalPodAutoscaler',
        'PodDisruptionBudget',
        'Job',
        'ConfigMap',
        'ServiceMonitor',
        'PrometheusRule',
        'Pod',
      ]) {
        expect(kinds).toContain(kind);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Routing: docs/api.md#routes through the rendered Ingresses, as ingress-nginx matches them.

type Backend = { service: string; port: number } | 'denied' | 'none';

function route(ingresses: K8s[], host: string, reqPath: string): Backend {
  const candidates: Array<{ path: string; pathType: string; backend: K8s; ingress: K8s }> = [];
  let regex = false;
  for (const ingress of ingresses) {
    for (const rule of ingress.spec.rules ?? []) {
      if (rule.host !== host) continue;
      if (ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/use-regex'] === 'true') regex = true;
      for (const p of rule.http.paths) candidates.push({ ...p, ingress });
    }
  }
  const pick = (c: (typeof candidates)[number]): Backend =>
    /0\.0\.0\.0\/0/.test(c.ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/denylist-source-range'] ?? '')
      ? 'denied'
      : { service: c.backend.service.name, port: c.backend.service.port.number };
  const exact = candidates.find((c) => c.pathType === 'Exact' && c.path === reqPath);
  if (exact) return pick(exact);
  const rest = candidates.filter((c) => c.pathType !== 'Exact');
  if (regex) {
    // With use-regex, every path of the host is a case-insensitive regex anchored at the start, tried
    // longest first (ingress-nginx sorts the locations by path length, descending).
    const sorted = [...rest].sort((a, b) => b.path.length - a.path.length);
    const hit = sorted.find((c) => new RegExp(`^${c.path}`, 'i').test(reqPath));
    return hit ? pick(hit) : 'none';
  }
  // Kubernetes Prefix semantics: element-wise prefix, the longest wins.
  const matches = rest.filter((c) => c.path === '/' || reqPath === c.path || reqPath.startsWith(`${c.path.replace(/\/$/, '')}/`));
  matches.sort((a, b) => b.path.length - a.path.length);
  return matches[0] ? pick(matches[0]) : 'none';
}

/** Service name + port → the Deployment behind it; returns the process it runs and its listen port. */
function processBehind(env: string, backend: { service: string; port: number }): { entry: string; containerPort: number; portEnv: string } {
  const service = one(env, 'Service', backend.service);
  const port = service.spec.ports.find((p: K8s) => p.port === backend.port);
  if (!port) throw new Error(`${backend.service} has no port ${backend.port}`);
  const deployment = objects(env, 'Deployment').find((d) => Object.entries(service.spec.selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
  if (!deployment) throw new Error(`no Deployment behind ${backend.service}`);
  const container = deployment.spec.template.spec.containers[0];
  const containerPort = container.ports.find((p: K8s) => p.name === port.targetPort || p.containerPort === port.targetPort);
  if (!containerPort) throw new Error(`${deployment.metadata.name} has no port ${port.targetPort}`);
  const portEnv = container.env.find((e: K8s) => e.name === 'PORT')?.value;
  return { entry: container.args[0], containerPort: containerPort.containerPort, portEnv };
}

// Every route of docs/api.md#routes (bus host) and #skill-catalogue (portal host) → the service that owns it (docs/architecture.md#layout).
const OWNER: Record<string, string> = {
  'GET /v1/health': 'gateway',
  'POST /v1/oauth/token': 'auth',
  'GET /v1/oauth/jwks': 'auth',
  // RFC 8414 metadata, at both spellings.
  'GET /.well-known/oauth-authorization-server/v1/oauth': 'auth',
  'GET /v1/oauth/.well-known/oauth-authorization-server': 'auth',
  'POST /v1/tenants/{t}/messages': 'gateway',
  'POST /v1/tenants/{t}/validate': 'gateway',
  'POST /v1/tenants/{t}/iam/messages': 'gateway',
  'POST /v1/tenants/{t}/iam/validate': 'gateway',
  'POST /v1/tenants/{t}/principals/verify': 'gateway',
  'GET /v1/tenants/{t}/consumers/{c}/messages': 'pull-api',
  'POST /v1/tenants/{t}/consumers/{c}/ack': 'pull-api',
  'POST /v1/tenants/{t}/consumers/{c}/nack': 'pull-api',
  'GET /v1/tenants/{t}/consumers/{c}/skills': 'pull-api',
  // The consumer's peek and readiness.
  'GET /v1/tenants/{t}/consumers/{c}/peek': 'pull-api',
  'GET /v1/tenants/{t}/consumers/{c}': 'pull-api',
  // The consumer's SQS door.
  'POST /v1/sqs': 'pull-api',
  'POST /v1/sqs/': 'pull-api',
  'POST /v1/sqs/{queue}': 'pull-api',
  // The producer's tester routes.
  'GET /v1/tenants/{t}/messages/{message_id}': 'gateway',
  'GET /v1/tenants/{t}/refusals': 'gateway',
  'GET /v1/tenants/{t}/stories/{correlation_id}': 'gateway',
  // Test runs (either kind of connection), served beside the tester routes.
  'POST /v1/tenants/{t}/runs': 'gateway',
  'GET /v1/tenants/{t}/runs/{run_id}': 'gateway',
  'POST /v1/tenants/{t}/runs/{run_id}/stop': 'gateway',
  'GET /v1/tenants/{t}/runs/{run_id}/report': 'gateway',
  'GET /v1/tenants/{t}/stories/{correlation_id}/export': 'gateway',
  'POST /v1/jwt/messages': 'gateway',
  'POST /v1/messages': 'gateway',
  'GET /api/skills/library': 'catalogue',
  'POST /api/skills/validate': 'catalogue',
  // Discovery routes the project adds to the spec's: the rule catalogue and the OpenAPI documents.
  'GET /v1/rules': 'gateway',
  'GET /v1/openapi.json': 'gateway',
  'GET /api/skills/openapi.json': 'catalogue',
  // The operator's admin API.
  ...Object.fromEntries(
    Object.entries(openapi.admin.paths).flatMap(([p, ops]) => Object.keys(ops).map((method) => [`${method.toUpperCase()} ${p}`, 'portal'])),
  ),
};

/** Every public route of the in-repo OpenAPI documents (which every e2e test checks responses against). */
function documentedRoutes(): string[] {
  return [openapi.bus, openapi.catalogue, openapi.admin].flatMap((doc) =>
    Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/v1/') || p.startsWith('/api/') || p.startsWith('/.well-known/'))
      .flatMap(([p, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${p}`)),
  );
}

function concrete(template: string): string {
  // {t} is a workspace id; the admin API's {o}, {w}, {a}, {c}, {r}, {p} carry their own letter.
  return template.replace('{t}', 'wabcdefghijk2').replace(/\{([a-z])\}/g, (_, letter: string) => `${letter}abcdefghijk2`);
}

describe('the rendered ingresses', () => {
  it('list every route of the OpenAPI documents: docs/api.md#routes, #skill-catalogue and the discovery routes', () => {
    // The documents live in the repository (schemas/openapi); every e2e test checks its
    // responses against them, and they carry every route of docs/api.md#routes, #skill-catalogue.
    const routes = documentedRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(19);
    expect([...new Set(routes)].sort()).toEqual(Object.keys(OWNER).sort());
  });

  describe.each(ENVIRONMENTS)('%s', (env) => {
    const hosts = () => {
      const values = parseYaml(readFileSync(path.join(CHART, 'ci', `${env}-values.yaml`), 'utf8'));
      return { bus: values.ingress.bus.host as string, portal: values.ingress.portal.host as string };
    };

    it.each(Object.entries(OWNER))('%s → %s', (routeKey, owner) => {
      const reqPath = concrete(routeKey.split(' ')[1]!);
      const host = reqPath.startsWith('/api/') ? hosts().portal : hosts().bus;
      const backend = route(objects(env, 'Ingress'), host, reqPath);
      expect(backend).not.toBe('none');
      expect(backend).not.toBe('denied');
      const target = processBehind(env, backend as { service: string; port: number });
      expect(target.entry).toBe(`services/${owner}/dist/main.js`);
      expect(target.portEnv).toBe(String(target.containerPort));
      // The port is the service's own default (services/<name>/src/main.ts), so a pod run without the
      // chart's PORT listens where the chart expects it.
      const main = readFileSync(path.join(ROOT, 'services', owner, 'src', 'main.ts'), 'utf8');
      expect(main).toMatch(new RegExp(`servicePort\\(${target.containerPort}\\)`));
    });

    it('routes the portal admin API and the portal UI to the portal', () => {
      for (const p of ['/api/admin/organisations', '/', '/index.html']) {
        const backend = route(objects(env, 'Ingress'), hosts().portal, p);
        expect(processBehind(env, backend as { service: string; port: number }).entry).toBe('services/portal/dist/main.js');
      }
    });

    it('keeps operational paths private and does not confuse look-alike paths', () => {
      const ingresses = objects(env, 'Ingress');
      for (const p of ['/metrics', '/healthz', '/readyz', '/', '/v2/health', '/v1x']) {
        expect(route(ingresses, hosts().bus, p)).toBe('none');
      }
      for (const p of ['/metrics', '/healthz', '/readyz']) expect(route(ingresses, hosts().portal, p)).toBe('denied');
      const owner = (p: string) => processBehind(env, route(ingresses, hosts().bus, p) as { service: string; port: number }).entry;
      expect(owner('/v1/oauthx')).toBe('services/gateway/dist/main.js');
      expect(owner('/v1/tenants/w1/consumersx/c1/messages')).toBe('services/gateway/dist/main.js');
      expect(owner('/v1/tenants/w1/messages')).toBe('services/gateway/dist/main.js');
      expect(owner('/v1/tenants/w1/consumers/c1/ack')).toBe('services/pull-api/dist/main.js');
      expect(owner('/v1/rules')).toBe('services/gateway/dist/main.js');
      expect(route(ingresses, hosts().portal, '/api/skillsx')).toEqual(route(ingresses, hosts().portal, '/'));
    });

    it('serves both hosts over TLS, the bus with a body limit above the gateway’s own 240,000 bytes', () => {
      for (const ingress of objects(env, 'Ingress').filter((i) => !i.metadata.name.endsWith('-deny'))) {
        expect(ingress.spec.tls?.[0]?.hosts).toEqual([ingress.spec.rules[0].host]);
        expect(ingress.spec.tls[0].secretName).toBeTruthy();
      }
      const bus = objects(env, 'Ingress').find((i) => i.spec.rules[0].host === hosts().bus);
      expect(bus.metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('2m');
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('values', () => {
  it('differ between Sandbox and Preview in archive retention and base URL', () => {
    const config = (env: string) => objects(env, 'ConfigMap').find((c) => c.metadata.name.endsWith('-config')).data;
    expect(config('sandbox').KAFKA_MESSAGES_RETENTION).toBe('30d');
    expect(config('preview').KAFKA_MESSAGES_RETENTION).toBe('7d');
    expect(config('sandbox').BUS_BASE_URL).toBe('https://bus.sandbox.example.com');
    expect(config('preview').BUS_BASE_URL).toBe('https://bus.preview.example.com');
    for (const env of ENVIRONMENTS) {
      const job = objects(env, 'Job')[0];
      const jobEnv = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: K8s) => [e.name, e.value]));
      expect(jobEnv.KAFKA_MESSAGES_RETENTION).toBe(config(env).KAFKA_MESSAGES_RETENTION);
    }
    // Retention: idempotency records default to each environment's archive (IDEMPOTENCY_RETENTION unset).
    for (const env of ENVIRONMENTS) {
      expect(config(env)).toMatchObject({
        QUEUE_RETENTION: '14d',
        QUARANTINE_RETENTION: '7d',
        REPLAY_JOB_RETENTION: '30d',
        RETENTION_SWEEP_INTERVAL: '1m',
        RETENTION_SWEEP_BATCH: '1000',
      });
      expect(config(env).IDEMPOTENCY_RETENTION).toBeUndefined();
    }
    // OTLP export: off unless configured.
    expect(config('sandbox').OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(config('preview').OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector.observability.svc:4318');
    // The portal's sign-in for people: its redirect URL from the portal ingress host unless given.
    expect(config('sandbox')).toMatchObject({
      PORTAL_OIDC_ISSUER: 'https://idp.example.com/realms/bus',
      PORTAL_OIDC_CLIENT_ID: 'bus-portal-sandbox',
      PORTAL_OIDC_REDIRECT_URL: 'https://portal.sandbox.example.com/portal/callback',
      PORTAL_OIDC_ACCESS_CLAIM: 'bus_access',
    });
    expect(config('sandbox').PORTAL_SESSION_IDLE_TIMEOUT).toBeUndefined();
    expect(config('preview')).toMatchObject({
      PORTAL_OIDC_REDIRECT_URL: 'https://portal.preview.example.com/portal/callback',
      PORTAL_OIDC_ACCESS_CLAIM: 'groups',
      PORTAL_SESSION_IDLE_TIMEOUT: '15m',
      PORTAL_SESSION_MAX_AGE: '8h',
    });
  });

  it('are all described by values.schema.json, which refuses unknown keys everywhere', () => {
    const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'));
    const values = parseYaml(readFileSync(path.join(CHART, 'values.yaml'), 'utf8'));
    const resolve = (s: K8s): K8s => (s.$ref ? resolve(schema.definitions[s.$ref.split('/').pop()]) : s);
    const missing: string[] = [];
    const walk = (value: unknown, s: K8s, at: string) => {
      s = resolve(s);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
      if (!s.properties) return; // a free-form map (annotations, labels, extraEnv, affinity, ...)
      if (s.additionalProperties !== false) missing.push(`${at} (open object)`);
      for (const [k, v] of Object.entries(value)) {
        if (!s.properties[k]) missing.push(`${at}.${k}`);
        else walk(v, s.properties[k], `${at}.${k}`);
      }
    };
    walk(values, schema, '');
    expect(missing).toEqual([]);
  });

  it.each([
    ['a negative replica count', ['--set', 'gateway.replicaCount=-1'], "at '/gateway/replicaCount'"],
    ['an unknown key', ['--set', 'gateway.replicas=3'], "additional properties 'replicas' not allowed"],
    ['an unknown top-level key', ['--set', 'replicaCount=3'], "additional properties 'replicaCount' not allowed"],
    ['a retention that is not a duration', ['--set', 'kafka.messagesRetention=30 days'], "at '/kafka/messagesRetention'"],
    ['a retention window that is not a duration', ['--set', 'retention.queue=2 weeks'], "at '/retention/queue'"],
    ['an unknown environment', ['--set', 'environment=production'], "at '/environment'"],
    ['a replica count given as text', ['--set-string', 'gateway.replicaCount=2'], "at '/gateway/replicaCount'"],
    ['a malformed broker list', ['--set', 'kafka.existingSecret=', '--set', 'kafka.brokers=kafka'], "at '/kafka/brokers'"],
    [
      'a signing key of the wrong size',
      ['--set', 'signingKeys.existingSecret=', '--set', 'signingKeys.encryptionKey=c2hvcnQ='],
      "at '/signingKeys/encryptionKey'",
    ],
    ['a receipt handle key that is too short', ['--set', 'receiptHandles.existingSecret=', '--set', 'receiptHandles.key=c2hvcnQ='], "at '/receiptHandles/key'"],
    ['a sign-in provider without https', ['--set', 'portalSignIn.issuer=http://idp.example.com'], "at '/portalSignIn/issuer'"],
    [
      'a sign-in redirect that is not the portal callback',
      ['--set', 'portalSignIn.redirectUrl=https://portal.sandbox.example.com/'],
      "at '/portalSignIn/redirectUrl'",
    ],
    [
      'a CPU target over 100%',
      ['--set', 'delivery.autoscaling.targetCPUUtilizationPercentage=150'],
      "at '/delivery/autoscaling/targetCPUUtilizationPercentage'",
    ],
  ])('refuses %s', (_what, args, message) => {
    const result = helmTemplate(args);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(message);
  });

  it.each([
    [
      'delivery replicas beyond the partitions',
      ['--set', 'delivery.autoscaling.maxReplicas=13'],
      'delivery.autoscaling.maxReplicas: 13 is more than kafka.messagesPartitions (12)',
    ],
    ['a base URL on another host than the bus ingress', ['--set', 'busBaseUrl=https://bus.preview.example.com'], 'must be ingress.bus.host'],
    [
      'a dependency with neither a value nor a Secret',
      ['--set', 'postgres.existingSecret='],
      'postgres: set postgres.url (DATABASE_URL) or postgres.existingSecret',
    ],
    [
      'an HPA whose minimum exceeds its maximum',
      ['--set', 'gateway.autoscaling.minReplicas=11'],
      'gateway.autoscaling: minReplicas (11) is more than maxReplicas (10)',
    ],
    ['sign-in without its client id', ['--set', 'portalSignIn.clientId='], 'portalSignIn.clientId: required when portalSignIn.issuer is set'],
    [
      'sign-in without its client secret',
      ['--set', 'portalSignIn.existingSecret='],
      'portalSignIn: set portalSignIn.clientSecret (PORTAL_OIDC_CLIENT_SECRET) or portalSignIn.existingSecret',
    ],
    [
      'sign-in without a redirect URL or a portal host',
      ['--set', 'ingress.enabled=false'],
      'portalSignIn.redirectUrl: required when the portal has no ingress host',
    ],
    ['tracing on without an endpoint', ['--set', 'otel.enabled=true'], 'otel.endpoint: required when otel.enabled'],
  ])('stops on %s (validateValues)', (_what, args, message) => {
    const result = helmTemplate(args);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('VALUES VALIDATION');
    expect(result.output).toContain(message);
  });

  it('names every missing setting at once when rendered with the defaults', () => {
    let stderr = '';
    try {
      execFileSync(HELM, ['template', 'message-bus', CHART], { stdio: 'pipe' });
    } catch (err) {
      stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    }
    for (const name of ['postgres', 'redis', 'kafka', 'signingKeys', 'receiptHandles', 'operator', 'busBaseUrl', 'ingress.bus.host', 'ingress.portal.host']) {
      expect(stderr).toContain(`  - ${name}`);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('workloads', () => {
  it.each(ENVIRONMENTS)('%s: every Deployment is probed, bounded and locked down', (env) => {
    const deployments = objects(env, 'Deployment');
    expect(deployments.map((d) => d.spec.template.spec.containers[0].args[0]).sort()).toEqual(
      ['auth', 'catalogue', 'delivery', 'gateway', 'portal', 'pull-api'].map((s) => `services/${s}/dist/main.js`),
    );
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(c.resources.requests.cpu).toBeTruthy();
      expect(c.resources.requests.memory).toBeTruthy();
      expect(c.resources.limits.memory).toBeTruthy();
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    }
  });

  it.each(ENVIRONMENTS)('%s: each process runs with the Node flags the tests and benches give it (BUS_NODE_FLAGS)', (env) => {
    const flagsOf = (entry: string) => (BUS_NODE_FLAGS[entry] ?? []).join(' ');
    expect(flagsOf('services/delivery/dist/main.js')).toContain('--max-semi-space-size=');
    for (const d of objects(env, 'Deployment')) {
      const c = d.spec.template.spec.containers[0];
      const nodeOptions = c.env.find((e: K8s) => e.name === 'NODE_OPTIONS')?.value ?? '';
      expect({ entry: c.args[0], nodeOptions }).toEqual({ entry: c.args[0], nodeOptions: flagsOf(c.args[0]) });
    }
    // npm start in each service runs it as the chart does.
    for (const entry of Object.keys(BUS_NODE_FLAGS)) {
      const pkg = JSON.parse(readFileSync(path.join(ROOT, entry.replace(/dist\/main\.js$/, 'package.json')), 'utf8')) as { scripts: { start: string } };
      expect(pkg.scripts.start).toBe(`node ${flagsOf(entry)} dist/main.js`);
    }
  });

  it.each(ENVIRONMENTS)('%s: delivery scales with the partitions; budgets only where more than one replica runs', (env) => {
    const partitions = Number(objects(env, 'ConfigMap').find((c) => c.metadata.name.endsWith('-config')).data.KAFKA_MESSAGES_PARTITIONS);
    const hpa = objects(env, 'HorizontalPodAutoscaler').find((h) => h.metadata.name.endsWith('-delivery'));
    expect(hpa.spec.maxReplicas).toBeLessThanOrEqual(partitions);
    for (const pdb of objects(env, 'PodDisruptionBudget')) {
      const name = pdb.metadata.name;
      const hpaOf = objects(env, 'HorizontalPodAutoscaler').find((h) => h.metadata.name === name);
      const replicas = hpaOf ? hpaOf.spec.minReplicas : one(env, 'Deployment', name).spec.replicas;
      expect(replicas).toBeGreaterThan(1);
    }
    expect(objects('inline-secrets', 'PodDisruptionBudget').map((p) => p.metadata.name)).toEqual(['message-bus-delivery']);
  });

  it("preview: the gateway alone mounts the managed apps' file and Secret, and reads the file it is given", () => {
    const configMap = one('preview', 'ConfigMap', 'message-bus-managed-apps');
    const read: string[] = [];
    const apps = parseManagedApps(configMap.data['apps.yaml'], {
      allowHttpLoopback: false,
      readSecret: (file) => {
        read.push(file);
        return 'the secret from the mounted Secret';
      },
    });
    expect(apps.map((a) => [a.name, a.auth.kind])).toEqual([
      ['newsroom-feed', 'token'],
      ['archive-sync', 'aws'],
    ]);
    expect(read).toEqual(['/etc/message-bus/managed-apps-secrets/archive-sync']);
    for (const d of objects('preview', 'Deployment')) {
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      const env = Object.fromEntries((c.env ?? []).map((e: K8s) => [e.name, e.value]));
      if (c.args[0] !== 'services/gateway/dist/main.js') {
        expect({ deployment: d.metadata.name, file: env.MANAGED_APPS_FILE }).toEqual({ deployment: d.metadata.name, file: undefined });
        continue;
      }
      expect(env.MANAGED_APPS_FILE).toBe('/etc/message-bus/managed-apps/apps.yaml');
      expect(c.volumeMounts).toEqual(
        expect.arrayContaining([
          { name: 'managed-apps', mountPath: '/etc/message-bus/managed-apps', readOnly: true },
          { name: 'managed-apps-secrets', mountPath: '/etc/message-bus/managed-apps-secrets', readOnly: true },
        ]),
      );
      expect(pod.volumes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'managed-apps', configMap: expect.objectContaining({ name: 'message-bus-managed-apps' }) }),
          expect.objectContaining({ name: 'managed-apps-secrets', secret: expect.objectContaining({ secretName: 'message-bus-managed-apps' }) }),
        ]),
      );
      // A changed list rolls the gateway: the ConfigMap's checksum is in its pod template.
      expect(d.spec.template.metadata.annotations['checksum/managed-apps']).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it.each(ENVIRONMENTS)('%s: runs setup.js as a pre-install/pre-upgrade hook and tests /v1/health', (env) => {
    const job = objects(env, 'Job')[0];
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].args).toEqual(['services/all-in-one/dist/setup.js']);
    const test = objects(env, 'Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test');
    const url = test.spec.containers[0].env.find((e: K8s) => e.name === 'HEALTH_URL').value as string;
    const u = new URL(url);
    expect(u.pathname).toBe('/v1/health');
    expect(processBehind(env, { service: u.hostname, port: Number(u.port) }).entry).toBe('services/gateway/dist/main.js');
  });

  it('takes secrets from existing Secrets when named, from its own Secret otherwise', () => {
    expect(objects('preview', 'Secret')).toEqual([]);
    const auth = one('preview', 'Deployment', 'message-bus-auth').spec.template.spec.containers[0];
    expect(auth.env.find((e: K8s) => e.name === 'SIGNING_KEY_ENCRYPTION_KEY').valueFrom.secretKeyRef).toEqual({
      name: 'message-bus-signing',
      key: 'encryption-key',
    });
    const pullApi = one('preview', 'Deployment', 'message-bus-pull-api').spec.template.spec.containers[0];
    expect(pullApi.env.find((e: K8s) => e.name === 'RECEIPT_HANDLE_KEY').valueFrom.secretKeyRef).toEqual({
      name: 'message-bus-receipts',
      key: 'receipt-handle-key',
    });
    const portal = one('preview', 'Deployment', 'message-bus-portal').spec.template.spec.containers[0];
    expect(portal.env.find((e: K8s) => e.name === 'OPERATOR_CLIENT_SECRET').valueFrom.secretKeyRef).toEqual({
      name: 'message-bus-operator',
      key: 'client-secret',
    });
    expect(portal.env.find((e: K8s) => e.name === 'PORTAL_OIDC_CLIENT_SECRET').valueFrom.secretKeyRef).toEqual({
      name: 'message-bus-portal-oidc',
      key: 'client-secret',
    });

    const values = parseYaml(readFileSync(path.join(CHART, 'ci', 'inline-secrets-values.yaml'), 'utf8'));
    const own = one('inline-secrets', 'Secret', 'message-bus');
    const decoded = Object.fromEntries(Object.entries(own.data).map(([k, v]) => [k, Buffer.from(String(v), 'base64').toString()]));
    expect(decoded).toEqual({
      DATABASE_URL: values.postgres.url,
      REDIS_URL: values.redis.url,
      KAFKA_BROKERS: values.kafka.brokers,
      SIGNING_KEY_ENCRYPTION_KEY: values.signingKeys.encryptionKey,
      RECEIPT_HANDLE_KEY: values.receiptHandles.key,
      OPERATOR_CLIENT_ID: values.operator.clientId,
      OPERATOR_CLIENT_SECRET: values.operator.clientSecret,
      PORTAL_OIDC_CLIENT_SECRET: values.portalSignIn.clientSecret,
    });
    // The hook runs before the release's Secret exists: it reads a hook Secret created just before it.
    const hookSecret = one('inline-secrets', 'Secret', 'message-bus-migrations');
    expect(Number(hookSecret.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(
      Number(objects('inline-secrets', 'Job')[0].metadata.annotations['helm.sh/hook-weight']),
    );
    expect(Object.keys(hookSecret.data).sort()).toEqual(['DATABASE_URL', 'KAFKA_BROKERS']);
  });
});

// ---------------------------------------------------------------------------------------------
// The rendered environment starts the real services.

/** A container's environment as the kubelet builds it: envFrom ConfigMaps, then env (secrets via `secrets`). */
function containerEnv(env: string, container: K8s, secrets: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(out, one(env, 'ConfigMap', from.configMapRef.name).data);
  for (const e of container.env ?? []) {
    if (e.value !== undefined) out[e.name] = String(e.value);
    else if (e.valueFrom?.secretKeyRef) {
      const value = secrets[e.name];
      if (value === undefined) throw new Error(`no local value for secret variable ${e.name}`);
      out[e.name] = value;
    }
  }
  return out;
}

/** Variable names the services' config specs read: keys of the spec objects in libs/ and services/. */
function configVariables(): Set<string> {
  const names = new Set<string>();
  for (const group of ['libs', 'services']) {
    for (const pkg of readdirSync(path.join(ROOT, group))) {
      const src = path.join(ROOT, group, pkg, 'src');
      if (!existsSync(src)) continue;
      for (const file of readdirSync(src, { recursive: true }) as string[]) {
        if (!/\.tsx?$/.test(file) || /\.test\.tsx?$/.test(file)) continue;
        const text = readFileSync(path.join(src, file), 'utf8');
        for (const m of text.matchAll(/(?:^\s+|\{\s*)([A-Z][A-Z0-9_]+): [A-Za-z0-9_]+\(/gm)) names.add(m[1]!);
      }
    }
  }
  // The retention windows' variables are read from libs/db's registry, one per window, not written out.
  for (const window of RETENTION_WINDOWS) names.add(window.variable);
  return names;
}

describe('variable names', () => {
  it('every variable the chart sets is one a config spec reads (no typo hides behind a default)', () => {
    const known = configVariables();
    expect(known).toContain('DATABASE_URL');
    const unknown = new Set<string>();
    for (const env of Object.keys(renders)) {
      for (const cm of objects(env, 'ConfigMap').filter((c) => c.metadata.name.endsWith('-config'))) {
        for (const name of Object.keys(cm.data)) if (!known.has(name)) unknown.add(name);
      }
      for (const o of renders[env]!) {
        const spec = o.kind === 'Pod' ? o.spec : o.spec?.template?.spec;
        for (const c of spec?.containers ?? []) for (const e of c.env ?? []) if (!known.has(e.name)) unknown.add(e.name);
      }
    }
    unknown.delete('HEALTH_URL'); // the helm test pod's own script
    unknown.delete('NODE_OPTIONS'); // Node's own: the flags of libs/testing BUS_NODE_FLAGS (tested with the workloads)
    expect([...unknown]).toEqual([]);
  });
});

describe('the rendered environment', () => {
  const built = ['auth', 'gateway', 'pull-api', 'delivery', 'catalogue', 'portal', 'all-in-one'].every((s) =>
    existsSync(path.join(ROOT, 'services', s, 'dist', s === 'all-in-one' ? 'setup.js' : 'main.js')),
  );

  it('starts every service against the local stack, ready on its probe paths, and setup.js runs', async () => {
    if (!built) throw new Error('services are not built: run `npm test` (it builds first) or `npm run build`');
    const database = await createTestDatabase('bus_chart');
    const processes: ServiceProcess[] = [];
    try {
      // Secret variables → the local servers; everything else exactly as the chart renders it, except the
      // single local broker's topic settings and a Redis key prefix of this test's own.
      const secrets: Record<string, string> = {
        DATABASE_URL: database.url,
        REDIS_URL: process.env.REDIS_URL!,
        KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
        SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        RECEIPT_HANDLE_KEY: randomBytes(32).toString('base64'),
        OPERATOR_CLIENT_ID: 'operator',
        OPERATOR_CLIENT_SECRET: randomBytes(16).toString('hex'),
        PORTAL_OIDC_CLIENT_SECRET: randomBytes(16).toString('hex'),
      };
      const local = { KAFKA_REPLICATION_FACTOR: '1', KAFKA_MESSAGES_PARTITIONS: '3', REDIS_KEY_PREFIX: database.name, HOST: '127.0.0.1' };

      const job = objects('sandbox', 'Job')[0].spec.template.spec.containers[0];
      const setup = startNodeProcess(job.args[0], { ...containerEnv('sandbox', job, secrets), ...local });
      const code = await setup.exited;
      expect({ code, output: code === 0 ? '' : setup.output() }).toEqual({ code: 0, output: '' });

      const started = await Promise.all(
        objects('sandbox', 'Deployment').map(async (d) => {
          const c = d.spec.template.spec.containers[0];
          const port = await freePort();
          const proc = startNodeProcess(c.args[0], { ...containerEnv('sandbox', c, secrets), ...local, PORT: String(port) });
          processes.push(proc);
          const base = `http://127.0.0.1:${port}`;
          await waitForHttp(`${base}${c.startupProbe.httpGet.path}`, { process: proc, timeoutMs: 30_000 });
          await waitForHttp(`${base}${c.readinessProbe.httpGet.path}`, { process: proc, timeoutMs: 30_000 });
          await waitForHttp(`${base}${c.livenessProbe.httpGet.path}`, { process: proc, timeoutMs: 5_000 });
          return { entry: c.args[0] as string, base };
        }),
      );
      expect(started).toHaveLength(6);

      // The `helm test` pod's own script (node -e, as the image's entrypoint runs it) passes against
      // the gateway, with the gateway's address in place of its Service name.
      const testPod = objects('sandbox', 'Pod').find((p) => p.metadata.annotations?.['helm.sh/hook'] === 'test').spec.containers[0];
      const gateway = started.find((s) => s.entry === 'services/gateway/dist/main.js')!;
      const healthUrl = new URL(testPod.env.find((e: K8s) => e.name === 'HEALTH_URL').value);
      const check = await promisify(execFile)(process.execPath, testPod.args, {
        env: { PATH: process.env.PATH ?? '', HEALTH_URL: `${gateway.base}${healthUrl.pathname}` },
      });
      expect(check.stdout).toMatch(/^200 \{"ok":true,"som_version":"1\.0\.0"/);

      // The standalone pull API serves its routes (no 501): an unauthenticated receive is refused by
      // the consumer authentication with the spec's 401 body.
      const pullApi = started.find((s) => s.entry === 'services/pull-api/dist/main.js')!;
      const receivePath = '/v1/tenants/wxxxxxxxxxxxx/consumers/cxxxxxxxxxxxx/messages';
      const refused = await fetchObserved(`${pullApi.base}${receivePath}`);
      createOpenApiChecker(openapi.bus).check('GET', receivePath, refused);
      expect([refused.status, refused.body]).toEqual([
        401,
        { accepted: false, violations: [expect.objectContaining({ source: 'policy', rule: 'producer.unauthenticated' })] },
      ]);

      for (const proc of processes.splice(0)) expect(await proc.stop()).toBe(0);
    } finally {
      await Promise.all(processes.map((p) => p.stop('SIGKILL')));
      await database.drop();
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------

/**
 * Parses a PromQL expression with the Prometheus project's own grammar (@prometheus-io/lezer-promql)
 * and returns the metric names it selects; a syntax error fails the test. Grafana's variables are
 * replaced by values first.
 */
function metricNames(expr: string): string[] {
  const text = expr.replace(/\$__rate_interval/g, '5m').replace(/\$__range/g, '1h');
  const tree = promqlParser.parse(text);
  const names: string[] = [];
  const errors: number[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(node.from);
      if (node.type.name === 'Identifier' && node.node.parent?.type.name === 'VectorSelector') names.push(text.slice(node.from, node.to));
    },
  });
  if (errors.length > 0) throw new Error(`PromQL syntax error at ${errors[0]} in: ${text}`);
  return names;
}

describe('dashboards and alerts', () => {
  // The one list of exported metrics (libs/observability/src/metric-names.ts).
  const contract = new Set<string>(Object.values(METRICS).map((m) => m.name));
  const base = (name: string) => name.replace(/_(bucket|sum|count)$/, '');

  it('docs/observability.md lists exactly the metrics of metric-names.ts, with their types and labels', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'observability.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z0-9_:]+)` \| (\w+) \|([^|]*)\|/gm)].map((m) => ({
      name: m[1]!,
      type: m[2]!,
      labelNames: [...m[3]!.matchAll(/`([a-z_]+)`/g)].map((l) => l[1]!),
    }));
    expect(rows.map((r) => r.name).sort()).toEqual([...contract].sort());
    for (const row of rows) {
      const metric = Object.values(METRICS).find((m) => m.name === row.name)!;
      expect({ name: row.name, type: row.type, labelNames: row.labelNames }).toEqual({
        name: metric.name,
        type: metric.type,
        labelNames: [...metric.labelNames],
      });
    }
  });

  it('the contract lists the metrics the dashboard and the issue need', () => {
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'bus_publish_total',
      'bus_token_requests_total',
      'bus_rate_limited_total',
      'bus_queue_depth',
      'bus_queue_oldest_age_seconds',
      'bus_delivery_lag_seconds',
      'bus_kafka_consumer_lag',
      'bus_delivery_quarantined_total',
      'bus_rate_limiter_fallback_total',
      'bus_retention_rows_removed_total',
      'bus_retention_sweep_duration_seconds',
      'bus_retention_oldest_row_age_seconds',
      'bus_retention_window_seconds',
    ]) {
      expect(contract).toContain(name);
    }
  });

  it('the dashboard (as generated, as rendered) queries only metrics of the contract', () => {
    const generated = execFileSync(process.execPath, [path.join(ROOT, 'deploy', 'observability', 'generate-dashboard.js')]).toString();
    expect(readFileSync(path.join(CHART, 'dashboards', 'message-bus.json'), 'utf8')).toBe(generated);
    const cm = objects('sandbox', 'ConfigMap').find((c) => c.metadata.name.endsWith('-dashboard'));
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    const dashboard = JSON.parse(cm.data['message-bus.json']);
    const exprs: string[] = dashboard.panels.flatMap((p: K8s) => (p.targets ?? []).map((t: K8s) => t.expr));
    expect(exprs.length).toBeGreaterThan(15);
    const used = new Set(exprs.flatMap(metricNames).map(base));
    for (const name of used) expect(contract).toContain(name);
    for (const name of [
      'bus_publish_total',
      'bus_token_requests_total',
      'bus_rate_limited_total',
      'bus_queue_depth',
      'bus_queue_oldest_age_seconds',
      'bus_queue_in_flight',
      'bus_delivery_lag_seconds',
      'bus_kafka_consumer_lag',
      'bus_delivery_quarantined_total',
    ]) {
      expect(used).toContain(name);
    }
  });

  it('the alert rules cover the issue’s cases with metrics of the contract, scoped to the release namespace', () => {
    const rule = objects('sandbox', 'PrometheusRule')[0];
    const rules: K8s[] = rule.spec.groups.flatMap((g: K8s) => g.rules);
    expect(rules.map((r) => r.alert).sort()).toEqual(
      [
        'BusComponentDown',
        'BusConsumerQueueOldestMessageAge',
        'BusDeliveryKafkaConsumerLag',
        'BusDeliveryQuarantineGrowing',
        'BusHigh5xxRate',
        'BusRateLimiterFallback',
        'BusRetentionBehind',
      ].sort(),
    );
    for (const r of rules) {
      for (const name of metricNames(r.expr)) if (name !== 'up') expect(contract).toContain(base(name));
      expect(r.expr).toContain('namespace="message-bus-sandbox"');
      expect(['warning', 'critical']).toContain(r.labels.severity);
      expect(r.annotations.summary).toBeTruthy();
    }
    const monitor = objects('sandbox', 'ServiceMonitor')[0];
    expect(monitor.spec.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('the container image', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const lines = dockerfile.split('\n').filter((l) => !l.startsWith('#'));
  const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => ({ image: m[1], name: m[2] }));

  it('is multi-stage on Node 24, the Node the project pins', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'prod-deps', 'runtime']);
    const nodeVersion = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1];
    const pinned = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies.node;
    expect(nodeVersion).toBe(pinned);
    expect(nodeVersion?.split('.')[0]).toBe('24');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:\$\{NODE_VERSION\}-/m);
  });

  it('runs as a numeric non-root user with node as the entrypoint and a compiled entry as the command', () => {
    const runtime = lines.slice(lines.findIndex((l) => / AS runtime$/.test(l))).join('\n');
    const user = /^USER (\d+):(\d+)$/m.exec(runtime);
    expect(user && Number(user[1])).toBeGreaterThan(0);
    const podUser = one('sandbox', 'Deployment', 'message-bus-gateway').spec.template.spec.securityContext.runAsUser;
    expect(podUser).toBe(Number(user![1]));
    expect(JSON.parse(/^ENTRYPOINT (.+)$/m.exec(runtime)![1]!)[0]).toBe('node');
    const cmd = JSON.parse(/^CMD (.+)$/m.exec(runtime)![1]!)[0] as string;
    expect(existsSync(path.join(ROOT, cmd.replace('/dist/', '/src/').replace(/\.js$/, '.ts')))).toBe(true);
    // Production dependencies only, no package manager left in the final stage.
    expect(dockerfile).toMatch(/npm install --omit=dev/);
    expect(runtime).toMatch(/rm -rf \/usr\/local\/lib\/node_modules\/npm/);
  });

  it('has an entry point in the packages for every process the chart runs', () => {
    const entries = new Set<string>();
    for (const env of Object.keys(renders)) {
      for (const o of renders[env]!) {
        const spec = o.kind === 'Pod' ? o.spec : o.spec?.template?.spec;
        for (const c of spec?.containers ?? []) if (c.args?.[0]?.startsWith('services/')) entries.add(c.args[0]);
      }
    }
    expect(entries.size).toBe(7);
    for (const entry of entries) expect(existsSync(path.join(ROOT, entry.replace('/dist/', '/src/').replace(/\.js$/, '.ts')))).toBe(true);
  });

  it('is replayed by deploy/image/replay-build.sh with the same commands', () => {
    const replay = readFileSync(path.join(ROOT, 'deploy', 'image', 'replay-build.sh'), 'utf8');
    const commands = [...dockerfile.matchAll(/^(?:RUN| &&) (npm install [^\\\n]+?|node node_modules\/typescript\/bin\/tsc [^\\\n]+?)\s*(?:\\)?$/gm)].map((m) =>
      m[1]!.trim(),
    );
    expect(commands).toHaveLength(3);
    for (const command of commands) expect(replay).toContain(command);
  });

  it('keeps dependencies, build output and local state out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['**/node_modules', '**/dist', '.git', '.local']) expect(ignored).toContain(p);
  });

  it('assembles a runtime layout of package manifests and compiled output only', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'bus-image-'));
    try {
      execFileSync('sh', [path.join(ROOT, 'deploy', 'image', 'assemble-runtime.sh'), ROOT, out], { stdio: 'pipe' });
      for (const service of ['auth', 'gateway', 'pull-api', 'delivery', 'catalogue', 'portal']) {
        if (existsSync(path.join(ROOT, 'services', service, 'dist', 'main.js'))) {
          expect(existsSync(path.join(out, 'services', service, 'dist', 'main.js'))).toBe(true);
        }
        expect(existsSync(path.join(out, 'services', service, 'src'))).toBe(false);
      }
      expect(existsSync(path.join(out, 'package-lock.json'))).toBe(true);
      expect(existsSync(path.join(out, 'schemas', 'index.js'))).toBe(true);
      const files = execFileSync('find', [out, '-name', '*.ts', '-not', '-name', '*.d.ts', '-o', '-name', '*.tsx', '-o', '-name', '*.test.js'])
        .toString()
        .trim();
      expect(files).toBe('');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// skaffold cannot run here (no Docker, no cluster, and its Go module is not served): check what it reads.

describe('skaffold.yaml', () => {
  const config = parseYaml(readFileSync(path.join(ROOT, 'skaffold.yaml'), 'utf8'));
  const releasesOf = (deploy: K8s): K8s[] => deploy?.helm?.releases ?? [];

  it('has the profiles dev, sandbox, preview, local-images and podman-containerd, dev activated by `skaffold dev`', () => {
    expect(config.apiVersion).toMatch(/^skaffold\/v4beta\d+$/);
    expect(config.profiles.map((p: K8s) => p.name)).toEqual(['dev', 'sandbox', 'preview', 'local-images', 'podman-containerd']);
    expect(config.profiles[0].activation).toEqual([{ command: 'dev' }]);
  });

  it('builds the Dockerfile and deploys the chart with existing values files and the built image', () => {
    const builds = [config.build, ...config.profiles.map((p: K8s) => p.build).filter(Boolean)];
    for (const build of builds) {
      expect(build.artifacts).toEqual([{ image: 'message-bus', context: '.', docker: { dockerfile: 'Dockerfile' } }]);
    }
    const deploys = [config.deploy, ...config.profiles.map((p: K8s) => p.deploy).filter(Boolean)];
    expect(deploys).toHaveLength(3);
    const namespaces = new Set<string>();
    for (const deploy of deploys) {
      const release = releasesOf(deploy).find((r) => r.chartPath === 'charts/message-bus');
      expect(existsSync(path.join(ROOT, release.chartPath, 'Chart.yaml'))).toBe(true);
      for (const file of release.valuesFiles) expect(existsSync(path.join(ROOT, file))).toBe(true);
      expect(release.setValueTemplates['image.repository']).toBe('{{.IMAGE_REPO_message_bus}}');
      expect(release.setValueTemplates['image.tag']).toMatch(/^\{\{\.IMAGE_TAG_message_bus\}\}/);
      namespaces.add(release.namespace);
    }
    expect([...namespaces].sort()).toEqual(['message-bus-dev', 'message-bus-preview', 'message-bus-sandbox']);
    expect(releasesOf(config.profiles[1].deploy)[0].valuesFiles).toEqual(['charts/message-bus/ci/sandbox-values.yaml']);
    expect(releasesOf(config.profiles[2].deploy)[0].valuesFiles).toEqual(['charts/message-bus/ci/preview-values.yaml']);
  });

  it('dev installs its own dependencies and their Secret first, in the same namespace, waiting for them', () => {
    const [deps, bus] = releasesOf(config.deploy);
    expect(deps).toMatchObject({ chartPath: 'deploy/helm/dev-deps', namespace: bus.namespace, wait: true });
    expect(existsSync(path.join(ROOT, deps.chartPath, 'Chart.yaml'))).toBe(true);
    // The profile for machines without a registry adds the local images' values to that release.
    const localImages = config.profiles.find((p: K8s) => p.name === 'local-images');
    expect(localImages.patches).toEqual([{ op: 'add', path: '/deploy/helm/releases/0/valuesFiles', value: ['deploy/helm/dev-deps/local-images-values.yaml'] }]);
    for (const file of localImages.patches[0].value) expect(existsSync(path.join(ROOT, file))).toBe(true);
  });

  it("dev's dependencies release generates every Secret key the bus's dev render reads", () => {
    const deps = load(path.join(RENDERED, 'dev-deps', 'dev-deps.yaml'));
    const secret = deps.find((o) => o.kind === 'Secret');
    const wanted = new Set<string>();
    for (const o of renders.dev!) {
      const spec = o.kind === 'Pod' ? o.spec : o.spec?.template?.spec;
      for (const c of spec?.containers ?? []) {
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) {
            expect(ref.name).toBe(secret.metadata.name);
            wanted.add(ref.key);
          }
        }
      }
    }
    expect(wanted.size).toBeGreaterThanOrEqual(7);
    expect(Object.keys(secret.data)).toEqual(expect.arrayContaining([...wanted]));
  });

  it('port-forwards Services that the dev values render, on their ports', () => {
    for (const forward of config.portForward) {
      expect(forward.namespace).toBe(releasesOf(config.deploy)[1].namespace);
      const service = one('dev', 'Service', forward.resourceName);
      expect(service.spec.ports.map((p: K8s) => p.port)).toContain(forward.port);
    }
    const gateway = config.portForward.find((f: K8s) => f.resourceName.endsWith('-gateway'));
    const devValues = parseYaml(readFileSync(path.join(ROOT, 'deploy', 'helm', 'dev-values.yaml'), 'utf8'));
    expect(devValues.busBaseUrl).toBe(`http://127.0.0.1:${gateway.localPort}`);
  });
});
