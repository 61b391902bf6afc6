import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDatabase } from '@bus/db';
import { PeopleStore } from '@bus/portal';
import { freePort, REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from '../support/bus';

/**
 * API fuzzing (`npm run test:fuzz`): schemathesis, installed from PyPI into a project-local
 * venv by deploy/fuzz/schemathesis.sh, runs against the OpenAPI documents a bus of this test's own
 * SERVES (bus host, admin API, catalogue) and the portal's own API (schemas/openapi/portal.json, which
 * the portal does not serve), with valid credentials, a bounded number of examples per
 * operation and a time limit per document. Required: no server error and no response that does not
 * conform to its document (status, content type, headers, body schema), invalid requests refused,
 * unsupported methods 405 with Allow, authentication not ignored. Loopback only.
 */

/**
 * Checks left out, and why: positive_data_acceptance expects every schema-valid request to succeed,
 * but the documents state rules a schema cannot express and answer them with their documented 400
 * (a SOM message's conformance rules, a custom quota's burst at least its rate, a replay time within
 * the archive); the other three are stateful heuristics that read a removed connection still listed
 * as `removed` (by design, docs/admin.md) as a use after free.
 */
const CHECKS_LEFT_OUT = ['positive_data_acceptance', 'use_after_free', 'ensure_resource_availability', 'object_level_authorization'];

/** Per operation and per document: a few minutes for the whole tier on 2 cores. */
const MAX_EXAMPLES = 25;

/**
 * CI fuzzes from a fixed seed, so a red run is reproducible and a green one is not luck. To explore,
 * FUZZ_SEED=random draws a new seed per run (printed with the results), or FUZZ_SEED=<n> replays one.
 */
const SEED = process.env.FUZZ_SEED ?? '20261122';
const SECONDS = { bus: 100, admin: 60, catalogue: 25, portal: 45 };

const WORK_DIR = path.join(REPO_ROOT, '.local', 'fuzz');

let bus: RunningBus;
let st: string;
let secrets: Record<string, string>;

interface RunReport {
  running_time: number;
  stop_reason: string;
  operations: { selected: number; tested: number; errored: number };
  test_cases: { generated: number; with_failures: number };
  failures: Array<{ code: string; title: string; operations: string[] }>;
  errors: Array<{ title?: string; message?: string; label?: string }>;
}

beforeAll(async () => {
  st = execFileSync('bash', [path.join(REPO_ROOT, 'deploy', 'fuzz', 'schemathesis.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  rmSync(WORK_DIR, { recursive: true, force: true });
  mkdirSync(WORK_DIR, { recursive: true });
  // The bus's own limits would answer most of the fuzzing 429 (documented, but nothing behind them
  // would be reached): the test raises them. The catalogue's all-caller limits stay as the spec says.
  bus = await startBus({
    BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000',
    BUS_LIMIT_API_PER_SECOND: '100000',
    BUS_LIMIT_API_BURST: '200000',
    ADMIN_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000',
    // Sign-in for people on, so the portal API answers. The fuzz run's session is seeded (below): the
    // issuer is never asked, as a session is what the callback makes of the provider's answer.
    ...(await signInSettings()),
  });
  secrets = await provision(bus);
}, 180_000);

afterAll(async () => {
  await bus?.stop();
});

/** Tenancy through the admin API, tokens through the token route: the credentials a user would have. */
async function provision(running: RunningBus): Promise<Record<string, string>> {
  const operator = { id: running.env.OPERATOR_CLIENT_ID as string, secret: running.env.OPERATOR_CLIENT_SECRET as string };
  const admin = async (method: string, route: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${running.portalUrl}${route}`, {
      method,
      headers: { Authorization: basic(operator.id, operator.secret), 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const token = async (clientId: string, clientSecret: string): Promise<string> => {
    const res = await fetch(`${running.busUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { Authorization: basic(clientId, clientSecret), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    if (res.status !== 200) throw new Error(`token route answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const quota = { tier: 'custom', per_second: 200, burst: 400, per_day: 10_000_000 };
  const organisation = await admin('POST', '/api/admin/organisations', { name: 'Fuzz house', kind: 'house', quota });
  const workspace = await admin('POST', '/api/admin/workspaces', { organisation_id: organisation.id, name: 'Fuzz workspace', quota });
  const app = await admin('POST', '/api/admin/apps', { workspace_id: workspace.id, name: 'Fuzz app' });
  await admin('PUT', `/api/admin/apps/${String(app.id)}/permissions`, { system_ids: ['storyteller.web'], message_types: ['telling.started', 'story.context'] });
  const producer = await admin('POST', '/api/admin/connections', { app_id: app.id, kind: 'producer' });
  const consumer = await admin('POST', '/api/admin/connections', { app_id: app.id, kind: 'consumer' });
  // The admin run may rotate, revoke or remove a connection: it gets one of its own, not the bus run's.
  const adminTarget = await admin('POST', '/api/admin/connections', { app_id: app.id, kind: 'consumer' });
  return {
    FUZZ_OPERATOR_ID: operator.id,
    FUZZ_OPERATOR_SECRET: operator.secret,
    FUZZ_PRODUCER_ID: String(producer.client_id),
    FUZZ_PRODUCER_SECRET: String(producer.client_secret),
    FUZZ_PRODUCER_TOKEN: await token(String(producer.client_id), String(producer.client_secret)),
    FUZZ_CONSUMER_TOKEN: await token(String(consumer.client_id), String(consumer.client_secret)),
    FUZZ_WORKSPACE: String(workspace.id),
    FUZZ_CONSUMER: String(consumer.client_id),
    FUZZ_ORGANISATION: String(organisation.id),
    FUZZ_APP: String(app.id),
    FUZZ_ADMIN_CONNECTION: String(adminTarget.client_id),
    ...(await portalSession(running, { app: String(app.id), admin })),
  };
}

/** PORTAL_OIDC_* of a loopback provider that need not run: the fuzz run's session does not sign in through it. */
async function signInSettings(): Promise<Record<string, string>> {
  const issuerPort = await freePort();
  return {
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${issuerPort}`,
    PORTAL_OIDC_CLIENT_ID: 'bus-portal',
    PORTAL_OIDC_CLIENT_SECRET: 'fuzz-client-secret-not-used',
    PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1/portal/callback',
  };
}

/**
 * A test-only session seed (docs/portal.md, Tests): an operator's session written as the sign-in's
 * callback writes one (PeopleStore.createSession), so schemathesis sends its cookie and CSRF token;
 * the browser tier signs in through the real provider. The portal run gets its own consumer
 * connection (it may revoke it) and a replay of it to read.
 */
async function portalSession(
  running: RunningBus,
  fixture: { app: string; admin: (method: string, route: string, body?: unknown) => Promise<Record<string, unknown>> },
): Promise<Record<string, string>> {
  const db = createDatabase({ url: running.env.DATABASE_URL as string, poolMax: 1, applicationName: 'fuzz-portal-session' });
  try {
    const { cookie, session } = await new PeopleStore(db).createSession(
      { subject: 'fuzz-operator', name: 'Fuzz operator', grants: [{ role: 'operator' }] },
      3_600_000,
    );
    const consumer = await fixture.admin('POST', '/api/admin/connections', { app_id: fixture.app, kind: 'consumer' });
    const replay = await fixture.admin('POST', `/api/admin/connections/${String(consumer.client_id)}/replays`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    return {
      FUZZ_PORTAL_SESSION: cookie,
      FUZZ_PORTAL_CSRF: session.csrfToken,
      FUZZ_PORTAL_CONNECTION: String(consumer.client_id),
      FUZZ_PORTAL_REPLAY: String(replay.replay_id),
    };
  } finally {
    await db.destroy();
  }
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/**
 * The schemathesis configuration of one run. Secrets stay in the environment of the child process
 * (`${VAR}` is schemathesis's own substitution): the files hold none.
 */
function configuration(extra: string): string {
  return [
    // One worker: the bus shares 2 cores with its own Postgres, Redis and Kafka.
    'workers = 1',
    'request-timeout = 10',
    '[generation]',
    'database = "none"',
    '[checks]',
    ...CHECKS_LEFT_OUT.map((check) => `${check} = { enabled = false }`),
    // Invalid data must be refused: schemathesis 4.32's list of refusals, and 413, which it leaves out.
    // A body past a route's size limit (an over-long string, say) is refused before it is read as JSON.
    'negative_data_rejection = { expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"] }',
    // In the stateful phase schemathesis 4.32 overwrites its own negative mutations with values from
    // API links and re-injects the credentials, then reports the valid request it sent as "invalid
    // data accepted" (seen twice: a redrive with a real workspace_id and Authorization, a receive
    // with wait_seconds=0, both answered 200 as they should). The check stays on in the coverage and
    // fuzzing phases, where the data it calls invalid is what it sends.
    '[phases.stateful.checks]',
    'negative_data_rejection = { enabled = false }',
    extra,
  ].join('\n');
}

const BUS_CONFIGURATION = configuration(
  [
    '[auth.openapi.bearer]',
    'bearer = "${FUZZ_PRODUCER_TOKEN}"',
    '[auth.openapi.basic]',
    'username = "${FUZZ_PRODUCER_ID}"',
    'password = "${FUZZ_PRODUCER_SECRET}"',
    // The tenant's own workspace and consumer, so requests reach the routes' logic instead of 403.
    // A long poll would hold each receive 20 s: the fuzz receives answer at once.
    '[parameters]',
    '"path.t" = "${FUZZ_WORKSPACE}"',
    '"path.c" = "${FUZZ_CONSUMER}"',
    '"query.wait_seconds" = 0',
    '[[operations]]',
    'include-path-regex = "/consumers/"',
    'headers = { Authorization = "Bearer ${FUZZ_CONSUMER_TOKEN}" }',
  ].join('\n'),
);

const ADMIN_CONFIGURATION = configuration(
  [
    '[auth]',
    'basic = { username = "${FUZZ_OPERATOR_ID}", password = "${FUZZ_OPERATOR_SECRET}" }',
    '[parameters]',
    '"path.o" = "${FUZZ_ORGANISATION}"',
    '"path.w" = "${FUZZ_WORKSPACE}"',
    '"path.a" = "${FUZZ_APP}"',
    '"path.c" = "${FUZZ_ADMIN_CONNECTION}"',
  ].join('\n'),
);

const CATALOGUE_CONFIGURATION = configuration('');

const PORTAL_CONFIGURATION = configuration(
  [
    '[auth.openapi.session]',
    'api_key = "${FUZZ_PORTAL_SESSION}"',
    '[parameters]',
    '"header.X-CSRF-Token" = "${FUZZ_PORTAL_CSRF}"',
    '"path.w" = "${FUZZ_WORKSPACE}"',
    '"path.a" = "${FUZZ_APP}"',
    '"path.c" = "${FUZZ_PORTAL_CONNECTION}"',
    '"path.p" = "${FUZZ_PORTAL_REPLAY}"',
    // Refusals are a producer's: the bus run's producer, which this run cannot change.
    '[[operations]]',
    'include-path-regex = "/refusals$"',
    'parameters = { "path.c" = "${FUZZ_PRODUCER_ID}" }',
  ].join('\n'),
);

async function fuzz(name: keyof typeof SECONDS, documentUrl: string, baseUrl: string, config: string): Promise<RunReport> {
  const dir = path.join(WORK_DIR, name);
  mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'schemathesis.toml');
  writeFileSync(configFile, config);
  const args = ['--config-file', configFile, 'run', documentUrl, '--url', baseUrl];
  args.push('--max-examples', String(MAX_EXAMPLES), '--max-time', String(SECONDS[name]), '--no-color', '--report', 'json', '--report-dir', dir);
  if (SEED !== 'random') args.push('--seed', SEED);
  const output = await new Promise<string>((resolve) => {
    execFile(
      st,
      args,
      { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, ...secrets }, maxBuffer: 64 * 1024 * 1024, timeout: (SECONDS[name] + 120) * 1000 },
      (_err, stdout, stderr) => resolve(`${stdout}${stderr}`),
    );
  });
  writeFileSync(path.join(dir, 'output.txt'), output);
  const reportFile = readdirSync(dir).find((f) => /^json-.*\.json$/.test(f));
  if (!reportFile) throw new Error(`schemathesis wrote no report for ${name}:\n${output.slice(-4000)}`);
  const reportText = readFileSync(path.join(dir, reportFile), 'utf8');
  const report = JSON.parse(reportText) as RunReport;
  // The seed is a 128-bit integer: read from the text, since a JSON number loses its digits past 2^53.
  const seed = /"seed":\s*(\d+)/.exec(reportText)?.[1] ?? 'unknown';
  process.stdout.write(
    `fuzz ${name}: ${report.operations.tested}/${report.operations.selected} operations, ${report.test_cases.generated} test cases, ` +
      `${report.running_time.toFixed(1)} s (${report.stop_reason}), seed ${seed}; ${report.failures.length} failures, ${report.errors.length} errors\n`,
  );
  if (report.failures.length > 0 || report.errors.length > 0)
    process.stdout.write(`${output.slice(-12_000)}\n(full output: ${path.join(dir, 'output.txt')})\n`);
  return report;
}

/** What a run found, one line each, so an assertion shows it. */
function problems(report: RunReport): string[] {
  return [
    ...report.failures.map((f) => `${f.code} ${f.title}: ${f.operations.join(', ')}`),
    ...report.errors.map((e) => `error ${e.label ?? ''} ${e.title ?? ''} ${e.message ?? ''}`.trim()),
  ];
}

describe('schemathesis against the served OpenAPI documents', () => {
  it('finds nothing on the bus host (GET /v1/openapi.json)', async () => {
    const report = await fuzz('bus', `${bus.busUrl}/v1/openapi.json`, bus.busUrl, BUS_CONFIGURATION);
    expect(report.operations.tested).toBeGreaterThan(0);
    expect(problems(report)).toEqual([]);
  }, 360_000);

  it('finds nothing on the admin API (GET /api/admin/openapi.json)', async () => {
    const report = await fuzz('admin', `${bus.portalUrl}/api/admin/openapi.json`, bus.portalUrl, ADMIN_CONFIGURATION);
    expect(report.operations.tested).toBeGreaterThan(0);
    expect(problems(report)).toEqual([]);
  }, 300_000);

  it('finds nothing on the catalogue (GET /api/skills/openapi.json)', async () => {
    const report = await fuzz('catalogue', `${bus.portalUrl}/api/skills/openapi.json`, bus.portalUrl, CATALOGUE_CONFIGURATION);
    expect(report.operations.tested).toBeGreaterThan(0);
    expect(problems(report)).toEqual([]);
  }, 240_000);

  it("finds nothing on the portal's own API (schemas/openapi/portal.json, signed in as the operator)", async () => {
    const report = await fuzz('portal', path.join(REPO_ROOT, 'schemas', 'openapi', 'portal.json'), bus.portalUrl, PORTAL_CONFIGURATION);
    expect(report.operations.tested).toBeGreaterThan(0);
    expect(problems(report)).toEqual([]);
  }, 260_000);
});
