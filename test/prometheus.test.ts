// The shipped alert rules and dashboard against the real tools (Debian's prometheus package, installed
// by deploy/local/run-tests.sh's ensure_prometheus):
// - `promtool check rules` accepts the chart's rendered PrometheusRule groups;
// - `promtool test rules` proves each alert fires on a synthetic series of the metrics it names;
// - a real Prometheus scrapes a running bus (scrape interval 1 s) while the test sends traffic, then
//   every alert expression and every dashboard query runs through its HTTP API: each must parse, name
//   only metrics the bus serves, and return data wherever the traffic must have made some.
// test/chart.test.ts checks the same files against libs/observability's metric list without a server.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import pino from 'pino';
import { som } from '@bus/schemas';
import { QUARANTINE_LOG_MESSAGE } from '@bus/delivery';
import { createKafka, MESSAGES_TOPIC, type Admin } from '@bus/kafka';
import { eventually, freePort } from '@bus/testing';
import { startBus, startStandaloneBus, STANDALONE_SERVICES, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..');
const CHART = path.join(ROOT, 'charts', 'message-bus');
const HELM = path.join(ROOT, '.local', 'bin', 'helm');
const PROMETHEUS = process.env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
const PROMTOOL = process.env.PROMTOOL_BIN ?? '/usr/bin/promtool';
const NAMESPACE = 'message-bus-sandbox';
const SYSTEM_ID = 'storyteller.web';

type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string>; annotations: Record<string, string> };
type Group = { name: string; rules: Rule[] };

/**
 * Dashboard panels that only show data after an incident the traffic does not cause: no 5xx. The
 * 429, limiter-fallback and quarantine counters have their series at 0 from the start, so their
 * panels show data (zeros) on a healthy bus too.
 */
const PANELS_EMPTY_WITHOUT_INCIDENT = new Set(['5xx ratio by service']);
/** The reason label values of bus_delivery_quarantined_total (docs/observability.md). */
const QUARANTINE_REASONS = ['headers.unreadable', 'value.missing', 'value.unreadable', 'acceptance.missing', 'acceptance.hash_mismatch', 'workspace.unknown'];

let work: string;
let groups: Group[];
let rulesFile: string;

beforeAll(async () => {
  for (const tool of [PROMETHEUS, PROMTOOL, HELM]) {
    if (!existsSync(tool)) throw new Error(`${tool} is missing: deploy/local/run-tests.sh installs it (ensure_prometheus, ensure_chart_tools)`);
  }
  work = mkdtempSync(path.join(tmpdir(), 'bus-prometheus-'));
  const { stdout } = await run(HELM, [
    'template',
    'message-bus',
    CHART,
    '-f',
    path.join(CHART, 'ci', 'sandbox-values.yaml'),
    '--namespace',
    NAMESPACE,
    '--show-only',
    'templates/prometheusrule.yaml',
  ]);
  groups = (parseYaml(stdout) as { spec: { groups: Group[] } }).spec.groups;
  rulesFile = path.join(work, 'rules.yaml');
  writeFileSync(rulesFile, stringifyYaml({ groups }));
}, 60_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const alerts = () => groups.flatMap((g) => g.rules);

describe('promtool', () => {
  it('checks the rendered PrometheusRule groups', async () => {
    const { stdout } = await run(PROMTOOL, ['check', 'rules', rulesFile]);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
    expect(alerts().length).toBeGreaterThanOrEqual(7);
  });

  // Series as the bus exposes them: its labelled counters exist at 0 from the process's start (the
  // reasons, limits and outcomes known in advance), so every increase is seen from the first one.
  const ns = `namespace="${NAMESPACE}"`;
  /** The components the sandbox values run, each with the label its ServiceMonitor adds. */
  const COMPONENTS = ['auth', 'gateway', 'pull-api', 'delivery', 'catalogue', 'portal'];
  const up = (component: string, values: string) => ({ series: `up{${ns}, component="${component}", instance="${component}-0", job="${component}"}`, values });
  const upExcept = (component: string) => COMPONENTS.filter((c) => c !== component).map((c) => up(c, '1x60'));
  const requests = (status: string, values: string) => ({
    series: `http_requests_total{${ns}, app="gateway", method="POST", route="/v1/tenants/:t/messages", status="${status}"}`,
    values,
  });
  const quarantined = (reason: string, values: string) => ({ series: `bus_delivery_quarantined_total{${ns}, pod="delivery-0", reason="${reason}"}`, values });

  interface AlertCase {
    alert: string;
    /** What the series show. */
    what: string;
    series: Array<{ series: string; values: string }>;
    /** When to look (past the alert's `for`). */
    at: string;
    /** The firing alerts then, by the labels that tell them apart ({} for one); [] for none. */
    firing: Array<Record<string, string>>;
  }
  // Per alert, first the case that must make it fire (it must not fire at 0m, before its `for`), then
  // the cases the alert must tell apart.
  const CASES: AlertCase[] = [
    {
      alert: 'BusConsumerQueueOldestMessageAge',
      what: 'a queue whose oldest message keeps ageing',
      series: [{ series: `bus_queue_oldest_age_seconds{${ns}, workspace="w1", consumer="c1"}`, values: '100000+60x30' }],
      at: '15m',
      firing: [{}],
    },
    {
      alert: 'BusDeliveryKafkaConsumerLag',
      what: 'two delivery replicas reporting the same lagging partition (counted once)',
      series: [
        { series: `bus_kafka_consumer_lag{${ns}, pod="a", group="g", topic="bus.messages.v1", partition="0"}`, values: '20000x30' },
        { series: `bus_kafka_consumer_lag{${ns}, pod="b", group="g", topic="bus.messages.v1", partition="0"}`, values: '20000x30' },
      ],
      at: '15m',
      firing: [{}],
    },
    {
      alert: 'BusDeliveryQuarantineGrowing',
      what: "a pod's first quarantine of a reason: the series at 0 since the start, then 1",
      series: [quarantined('acceptance.missing', '0x4 1x25'), quarantined('value.missing', '0x30')],
      at: '10m',
      firing: [{ reason: 'acceptance.missing' }],
    },
    {
      alert: 'BusDeliveryQuarantineGrowing',
      what: "a flood of another environment's records on a shared topic (workspace.unknown)",
      series: [quarantined('workspace.unknown', '0+600x30'), quarantined('acceptance.missing', '0x30')],
      at: '15m',
      firing: [],
    },
    {
      alert: 'BusHigh5xxRate',
      what: 'half the answers 5xx at 2 answers a second',
      series: [requests('500', '0+60x30'), requests('202', '0+60x30')],
      at: '15m',
      firing: [{ app: 'gateway' }],
    },
    {
      alert: 'BusHigh5xxRate',
      what: 'a lone request every 4 minutes, each one a 500',
      series: [requests('500', Array.from({ length: 40 }, (_, minute) => Math.floor(minute / 4)).join(' '))],
      at: '30m',
      firing: [],
    },
    {
      alert: 'BusHigh5xxRate',
      what: 'every answer a 500 at 3 a minute, below the minimum of answers',
      series: [requests('500', '0+3x30')],
      at: '15m',
      firing: [],
    },
    {
      alert: 'BusRateLimiterFallback',
      what: 'the in-process limiter deciding for 30 minutes',
      series: [{ series: `bus_rate_limiter_fallback_total{${ns}, app="gateway", limit="address"}`, values: '0+60x30' }],
      at: '15m',
      firing: [{}],
    },
    {
      alert: 'BusComponentDown',
      what: "delivery's only target down",
      series: [up('delivery', '0x30'), ...upExcept('delivery')],
      at: '10m',
      firing: [{ component: 'delivery' }],
    },
    {
      alert: 'BusComponentDown',
      what: "delivery's targets gone (scaled to 0, Pending, evicted): its up series disappear",
      series: [up('delivery', '1x2 _x30'), ...upExcept('delivery')],
      at: '14m',
      firing: [{ component: 'delivery' }],
    },
    {
      alert: 'BusComponentDown',
      what: 'every component scraped',
      series: COMPONENTS.map((c) => up(c, '1x30')),
      at: '15m',
      firing: [],
    },
    {
      alert: 'BusRetentionBehind',
      what: 'a table keeping rows far past its window',
      series: [
        { series: `bus_retention_oldest_row_age_seconds{${ns}, table="messages"}`, values: '10000000x60' },
        { series: `bus_retention_window_seconds{${ns}, table="messages"}`, values: '1000x60' },
      ],
      at: '45m',
      firing: [{}],
    },
  ];

  /** Runs one promtool rules test; its failure names what promtool said. */
  const promtoolTest = async (name: string, test: Record<string, unknown>) => {
    const file = path.join(work, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.test.yaml`);
    writeFileSync(file, stringifyYaml({ rule_files: [rulesFile], evaluation_interval: '1m', tests: [{ interval: '1m', ...test }] }));
    try {
      const { stdout } = await run(PROMTOOL, ['test', 'rules', file]);
      expect(stdout).toMatch(/SUCCESS/);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`promtool test rules failed for ${name}:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
    }
  };

  it('has a firing case for every alert', () => {
    const firingCases = new Set(CASES.filter((c) => c.firing.length > 0).map((c) => c.alert));
    expect(
      alerts()
        .map((r) => r.alert)
        .sort(),
    ).toEqual([...firingCases].sort());
  });

  it.each(CASES.map((c) => [c.alert, c.what, c] as const))('%s: %s (promtool test rules)', async (alert, what, c) => {
    const keys = Object.keys(c.firing[0] ?? {});
    // The ALERTS series the rule manager writes: firing, with the alert's own labels.
    const firing = `count${keys.length > 0 ? ` by (${keys.join(', ')})` : ''} (ALERTS{alertname="${alert}", alertstate="firing"})`;
    const labels = (l: Record<string, string>) => `{${Object.entries(l).map(([k, v]) => `${k}="${v}"`)}}`;
    await promtoolTest(`${alert} ${what}`, {
      input_series: c.series,
      promql_expr_test: [
        { expr: firing, eval_time: c.at, exp_samples: c.firing.map((l) => ({ labels: labels(l), value: 1 })) },
        ...(c.firing.length > 0 ? [{ expr: firing, eval_time: '0m', exp_samples: [] }] : []),
      ],
    });
  });

  it('says how many records BusDeliveryQuarantineGrowing counted as a whole number, and what delivery logged of them', async () => {
    const rule = alerts().find((r) => r.alert === 'BusDeliveryQuarantineGrowing')!;
    await promtoolTest('quarantine annotations', {
      // Scraped every 45 s, so that increase() extrapolates to 1.0256… over the 15 minutes.
      interval: '45s',
      input_series: [quarantined('acceptance.hash_mismatch', '0x6 1x30')],
      alert_rule_test: [
        {
          eval_time: '10m',
          alertname: 'BusDeliveryQuarantineGrowing',
          exp_alerts: [
            {
              exp_labels: { severity: 'critical', namespace: NAMESPACE, reason: 'acceptance.hash_mismatch' },
              exp_annotations: {
                // Never "1.0256410256410255 Kafka records".
                summary: 'Delivery quarantined 1 Kafka records (acceptance.hash_mismatch) in 15 minutes',
                description: rule.annotations.description!.replace(/\{\{ \$labels\.reason \}\}/g, 'acceptance.hash_mismatch'),
              },
            },
          ],
        },
      ],
    });
    // The message delivery logs for each quarantined record, as the runbook names it.
    expect(rule.annotations.description).toContain(`"${QUARANTINE_LOG_MESSAGE}"`);
  });
});

/** The value of the sample of `name` with exactly `labels` in Prometheus text, undefined when there is none. */
function sampleOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** The vector selectors of a PromQL expression (their text and metric name); a syntax error throws. */
function selectors(expr: string): Array<{ text: string; name: string }> {
  const tree = promqlParser.parse(expr);
  const found: Array<{ text: string; name: string }> = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) throw new Error(`PromQL syntax error at ${node.from} in: ${expr}`);
      if (node.type.name === 'VectorSelector') {
        const text = expr.slice(node.from, node.to);
        found.push({ text, name: /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(text)?.[0] ?? '' });
      }
    },
  });
  return found;
}

/** A Grafana query as Prometheus reads it: the dashboard's variables given values fit for a 1 s scrape. */
const grafanaQuery = (expr: string) =>
  expr
    .replace(/\$namespace/g, NAMESPACE)
    .replace(/\$__rate_interval/g, '15s')
    .replace(/\$__range/g, '5m');

/** Where each layout's processes are and what they answer: tokens (auth), publishes (gateway), receives (pull-api). */
interface Layout {
  env: Record<string, string>;
  auth: string;
  gateway: string;
  pullApi: string;
  /** Every process's /metrics, with the component label the chart's ServiceMonitor gives its pod. */
  targets: Array<{ url: string; component: string }>;
  stop(): Promise<void>;
}

async function startLayout(layout: 'all-in-one' | 'standalone', env: Record<string, string>): Promise<Layout> {
  if (layout === 'all-in-one') {
    const bus = await startBus(env);
    return {
      env: bus.env,
      auth: bus.busUrl,
      gateway: bus.busUrl,
      pullApi: bus.busUrl,
      targets: [{ url: bus.busUrl, component: 'all-in-one' }],
      stop: () => bus.stop(),
    };
  }
  const bus = await startStandaloneBus(env);
  return {
    env: bus.env,
    auth: bus.urls.auth,
    gateway: bus.urls.gateway,
    pullApi: bus.urls['pull-api'],
    targets: STANDALONE_SERVICES.map((service) => ({ url: bus.urls[service], component: service })),
    stop: () => bus.stop(),
  };
}

/** What test/support expects of a bus: its environment and the address of a route's process. */
const at = (layout: Layout, url: string) => ({ env: layout.env, busUrl: url }) as unknown as RunningBus;

describe.each(['all-in-one', 'standalone'] as const)('a real Prometheus scraping the %s bus', (layoutName) => {
  let bus: Layout;
  let kafkaAdmin: Admin | undefined;
  const groupId = `bus-delivery-prometheus-test-${randomUUID()}`;
  let tenants: TenantFixture;
  let house: Tenant;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let served: Set<string>;
  const texts = new Map<string, string>();
  const atStart = new Map<string, string>();

  const query = async (expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> => {
    const res = await fetch(`${prometheusUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`);
    return body.data!.result;
  };

  beforeAll(async () => {
    // Delivery's group starts at the end of the shared topic, so it does not first read every earlier
    // run's records (a new group reads from the start); the test deletes it at the end.
    kafkaAdmin = createKafka({ brokers: process.env.KAFKA_BROKERS!.split(','), clientId: 'test-prometheus', logger: pino({ level: 'warn' }) }).admin();
    await kafkaAdmin.connect();
    const ends = await kafkaAdmin.fetchTopicOffsets(MESSAGES_TOPIC);
    await kafkaAdmin.setOffsets({ groupId, topic: MESSAGES_TOPIC, partitions: ends.map((e) => ({ partition: e.partition, offset: e.high })) });
    // A sweep every 2 s, so the retention gauges (set after a sweep) have series in time.
    bus = await startLayout(layoutName, { RETENTION_SWEEP_INTERVAL: '2s', DELIVERY_GROUP_ID: groupId });
    // What each process serves as soon as it is ready, before any request of the test.
    for (const target of bus.targets) atStart.set(target.component, await (await fetch(`${target.url}/metrics`)).text());
    await deliveryCaughtUp(at(bus, bus.auth));
    tenants = await TenantFixture.create(at(bus, bus.auth));
    house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });

    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      path.join(work, `prometheus-${layoutName}.yml`),
      stringifyYaml({
        global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
        scrape_configs: [
          {
            job_name: 'bus',
            metrics_path: '/metrics',
            // What the chart's ServiceMonitor adds to each series in a cluster.
            static_configs: bus.targets.map((t) => ({ targets: [new URL(t.url).host], labels: { namespace: NAMESPACE, component: t.component } })),
          },
        ],
      }),
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${path.join(work, `prometheus-${layoutName}.yml`)}`,
        `--storage.tsdb.path=${path.join(work, `data-${layoutName}`)}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
      ],
      { stdio: 'ignore' },
    );
    await eventually(
      () => fetch(`${prometheusUrl}/-/ready`).then((r) => r.status),
      (s) => s === 200,
      { timeoutMs: 20_000, what: 'Prometheus ready' },
    );
    // The traffic comes after a first scrape, so that its increase is seen.
    await eventually(
      () => query(`up{namespace="${NAMESPACE}"} == 1`),
      (r) => r.length === bus.targets.length,
      { timeoutMs: 20_000, intervalMs: 250, what: 'a first scrape of the bus' },
    );

    // A burst of traffic: tokens, accepted publishes, a refused one, receives that leave messages
    // leased (in flight) and others waiting (depth, oldest age).
    const producer = await tenants.token(house.producer);
    const consumer = await tenants.token(house.consumer);
    const publish = (body: unknown) => bearerCall(at(bus, bus.gateway), 'POST', `/v1/tenants/${house.workspaceId}/messages`, producer, body);
    for (let i = 0; i < 20; i++) {
      const m = {
        ...(som.examples['telling.started'] as Record<string, unknown>),
        message_id: randomUUID(),
        correlation_id: `c-${randomUUID()}`,
        occurred_at: new Date().toISOString(),
      };
      expect((await publish(m)).status).toBe(202);
    }
    expect((await publish({ message_type: 'no.such.type' })).status).toBe(400);
    // RFC 8414 discovery, a route of two paths.
    expect((await fetch(`${bus.auth}/.well-known/oauth-authorization-server/v1/oauth`)).status).toBe(200);
    const consumerPath = `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/messages`;
    await eventually(
      async () =>
        ((await bearerCall(at(bus, bus.pullApi), 'GET', `${consumerPath}?wait_seconds=2&max_messages=5`, consumer)).body as { messages: unknown[] }).messages
          .length,
      (n) => n > 0,
      { timeoutMs: 20_000, what: 'a receive that leases messages' },
    );
    served = new Set();
    for (const target of bus.targets) {
      const text = await (await fetch(`${target.url}/metrics`)).text();
      texts.set(target.component, text);
      for (const m of text.matchAll(/^# TYPE (\S+) /gm)) served.add(m[1]!);
    }
    // Every target scraped after the last request, so each request's series is in Prometheus.
    const trafficEnded = Date.now() / 1000;
    await eventually(
      () => query(`timestamp(up{namespace="${NAMESPACE}"})`),
      (r) => r.length === bus.targets.length && r.every((s) => Number(s.value[1]) > trafficEnded),
      { timeoutMs: 10_000, intervalMs: 250, what: 'a scrape of every target after the traffic' },
    );
    // Once the traffic's deliveries are scraped twice, every query below has what it needs.
    await eventually(
      () => query(`increase(bus_delivery_lag_seconds_count{namespace="${NAMESPACE}"}[15s])`),
      (r) => r.some((s) => Number(s.value[1]) > 0),
      { timeoutMs: 30_000, intervalMs: 250, what: 'the deliveries scraped' },
    );
  }, 180_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await tenants?.close();
    await bus?.stop();
    await kafkaAdmin?.deleteGroups([groupId]).catch(() => undefined);
    await kafkaAdmin?.disconnect();
  }, 30_000);

  const base = (name: string) => name.replace(/_(bucket|sum|count)$/, '');

  it('serves metrics promtool check metrics finds nothing to say about, on one port per process', async () => {
    for (const [component, text] of texts) {
      try {
        execFileSync(PROMTOOL, ['check', 'metrics'], { input: text, stdio: 'pipe' });
      } catch (err) {
        const e = err as { stdout?: Buffer; stderr?: Buffer };
        throw new Error(`promtool check metrics on ${component}:\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`, { cause: err });
      }
    }
    // The all-in-one's portal port does not serve the registry a second time.
    if (layoutName === 'all-in-one') expect((await fetch(`http://127.0.0.1:${bus.env.PORTAL_PORT}/metrics`)).status).toBe(404);
  });

  it('serves the labelled counters the alerts and the dashboard rate() at 0 from its start, every known label value', () => {
    // The processes' limiters, by component (docs/observability.md, bus_rate_limited_total).
    const host = ['address', 'api_global'];
    const quota = ['connection_second', 'connection_day', 'signed_routes'];
    const token = ['token_client', 'token_address', 'token_global'];
    const limits: Record<string, string[]> = {
      'all-in-one': [...host, ...quota, ...token, 'skills_library', 'skills_validate', 'admin_address'],
      auth: [...host, ...token],
      gateway: [...host, ...quota],
      'pull-api': [...host, ...quota],
      delivery: [],
    };
    for (const [component, text] of atStart) {
      const at = (name: string, labels: Record<string, string>) => ({ component, name, labels, value: sampleOf(text, name, labels) });
      const zero = (name: string, labels: Record<string, string>) => expect(at(name, labels)).toEqual({ component, name, labels, value: 0 });
      const app = component;
      for (const limit of limits[component]!) {
        zero('bus_rate_limiter_fallback_total', { app, limit });
        zero('bus_rate_limited_total', { app, limit, rule: limit === 'connection_day' ? 'quota.exceeded' : 'rate.limited' });
      }
      if (component === 'delivery' || component === 'all-in-one') {
        // A record of another environment on the shared topic may already have been counted.
        expect(at('bus_delivery_quarantined_total', { reason: 'workspace.unknown' }).value).toEqual(expect.any(Number));
        for (const reason of QUARANTINE_REASONS.filter((r) => r !== 'workspace.unknown')) zero('bus_delivery_quarantined_total', { reason });
      }
      if (component === 'gateway' || component === 'all-in-one') {
        for (const mode of ['publish', 'validate']) for (const outcome of ['accepted', 'duplicate']) zero('bus_publish_total', { mode, outcome, rule: 'none' });
      }
      if (component === 'auth' || component === 'all-in-one') {
        for (const outcome of ['issued', 'invalid_request', 'invalid_client', 'unsupported_grant_type', 'temporarily_unavailable', 'rate_limited', 'error'])
          zero('bus_token_requests_total', { outcome });
      }
    }
  });

  (layoutName === 'all-in-one' ? it : it.skip)('labels the limiter metrics with the limits docs/observability.md lists, and the process as app', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'observability.md'), 'utf8');
    const row = /^\| `bus_rate_limited_total` \|.*`limit` ∈ ([^|]*)\|/m.exec(doc)![1]!;
    const documented = row
      .replace(/\([^)]*\)/g, '')
      .split(',')
      .map((l) => l.trim());
    // The all-in-one runs every limiter of the bus, each declared at 0 from the start.
    const served = [...atStart.get('all-in-one')!.matchAll(/^bus_rate_limiter_fallback_total\{([^}]*)\}/gm)].map((m) => ({
      app: /app="([^"]*)"/.exec(m[1]!)![1],
      limit: /limit="([^"]*)"/.exec(m[1]!)![1]!,
    }));
    expect(served.map((s) => s.limit).sort()).toEqual(documented.sort());
    expect(new Set(served.map((s) => s.app))).toEqual(new Set(['all-in-one']));
  });

  it('labels each answer with the service that owns its route and the route pattern, in either layout', async () => {
    const apps = (await query(`sum by (app) (http_requests_total{namespace="${NAMESPACE}"})`)).map((r) => r.metric.app);
    expect(apps).toEqual(expect.arrayContaining(['auth', 'gateway', 'pull-api']));
    const publishes = await query(`http_requests_total{namespace="${NAMESPACE}", app="gateway", route="/v1/tenants/:t/messages", status="202"}`);
    expect(publishes.length).toBeGreaterThan(0);
    expect(
      await query(`http_request_duration_seconds_count{namespace="${NAMESPACE}", app="gateway", route="/v1/tenants/:t/messages", status="202"}`),
    ).not.toEqual([]);
    expect(await query(`http_requests_total{namespace="${NAMESPACE}", route="/.well-known/oauth-authorization-server/v1/oauth", app="auth"}`)).not.toEqual([]);
    expect(await query(`http_requests_total{namespace="${NAMESPACE}", route="unmatched", status=~"2.."}`)).toEqual([]);
  });

  it('runs every alert expression: each names metrics the bus serves and selects its series', async () => {
    for (const rule of alerts()) {
      // The expression itself runs (its value depends on thresholds no healthy bus crosses).
      await query(rule.expr);
      for (const selector of selectors(rule.expr)) {
        if (selector.name === 'up') {
          // The all-in-one is one target; its component label cannot be a service's (the standalone
          // services each are one, as the chart's ServiceMonitor labels them). A component this layout
          // does not run (catalogue, portal) has no target: its absent() is what the alert reads.
          const component = /component="([^"]+)"/.exec(selector.text)?.[1];
          if (layoutName === 'all-in-one' || (component !== undefined && !bus.targets.some((t) => t.component === component))) {
            expect(await query(`up{namespace="${NAMESPACE}"}`)).not.toEqual([]);
            continue;
          }
        }
        expect({ alert: rule.alert, metric: selector.name, served: selector.name === 'up' || served.has(base(selector.name)) }).toEqual({
          alert: rule.alert,
          metric: selector.name,
          served: true,
        });
        // No 5xx without an incident: the metric's other series stand in for the selector's.
        const text = selector.text.includes('status=~"5.."') ? `${selector.name}{namespace="${NAMESPACE}"}` : selector.text;
        const found = await eventually(
          () => query(text),
          (r) => r.length > 0,
          { timeoutMs: 5_000, intervalMs: 250, what: `${rule.alert}: ${selector.text}`, retryReadErrors: false },
        );
        expect(found.length).toBeGreaterThan(0);
      }
    }
  }, 60_000);

  it('runs every dashboard query: each names metrics the bus serves and shows the traffic', async () => {
    const dashboard = JSON.parse(readFileSync(path.join(CHART, 'dashboards', 'message-bus.json'), 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: grafanaQuery(t.expr) })));
    expect(targets.length).toBeGreaterThan(15);
    const empty: string[] = [];
    for (const { panel, expr } of targets) {
      for (const selector of selectors(expr)) {
        expect({ panel, metric: selector.name, served: served.has(base(selector.name)) }).toEqual({ panel, metric: selector.name, served: true });
      }
      if (PANELS_EMPTY_WITHOUT_INCIDENT.has(panel)) {
        await query(expr);
        continue;
      }
      const result = await eventually(
        () => query(expr),
        (r) => r.length > 0,
        { timeoutMs: 3_000, intervalMs: 250, what: `${panel}: ${expr}`, retryReadErrors: false },
      ).catch(() => []);
      if (result.length === 0) empty.push(`${panel}: ${expr}`);
    }
    expect(empty).toEqual([]);
  }, 60_000);
});
