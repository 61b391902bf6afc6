import { execFile, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { openapi, som } from '@bus/schemas';
import { REPO_ROOT, createOpenApiChecker, eventually, fetchObserved, freePort, requireEnv, startNodeProcess, startProcess, waitForHttp } from '@bus/testing';
import { startBus } from './support/bus';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture } from './support/tenants';

/**
 * A stand-in OTLP/HTTP collector: records what each POST carried. With `keep`, a batch of spans is
 * recorded with only the spans it keeps: a bus whose delivery group first reads a long topic history
 * (a developer's stack after benches) exports a span per record, more than this process can hold.
 */
async function startCollector(
  keep?: (span: ExportedSpan) => boolean,
): Promise<{ url: string; received: Array<{ path: string; body: string }>; server: Server }> {
  const received: Array<{ path: string; body: string }> = [];
  // Stream events, not an async handler: node:http ignores the handler's promise, so a rejection would go unhandled.
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => void (body += String(chunk)));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: keep && req.url === '/v1/traces' ? keptSpans(body, keep) : body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

/** Starts the catalogue, sends it one request of `target` and stops it; answers the JSON lines it logged. */
async function runCatalogueOnce(env: Record<string, string>, target = '/api/skills/library'): Promise<Array<Record<string, unknown>>> {
  const port = await freePort();
  const proc = startNodeProcess('services/catalogue/dist/main.js', { HOST: '127.0.0.1', PORT: String(port), REDIS_URL: requireEnv('REDIS_URL'), ...env });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, { process: proc });
  expect((await fetch(`http://127.0.0.1:${port}${target}`)).status).toBe(200);
  // Spans leave in batches; SIGTERM's shutdown flushes the last batch before the process exits.
  expect(await proc.stop('SIGTERM')).toBe(0);
  return proc
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The catalogue's log line of its answer to GET /api/skills/library. */
const libraryRequestLine = (lines: Array<Record<string, unknown>>) => lines.find((l) => l.msg === 'request' && l.route === '/api/skills/library');

describe('OpenTelemetry tracing', () => {
  it('exports the spans of HTTP requests to the configured OTLP endpoint', async () => {
    const collector = await startCollector();
    try {
      await runCatalogueOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
      const traces = collector.received.filter((r) => r.path === '/v1/traces');
      expect(traces.length).toBeGreaterThan(0);
      const exported = traces.map((t) => t.body).join('\n');
      expect(exported).toContain('catalogue');
      expect(exported).toContain('/api/skills/library');
    } finally {
      collector.server.close();
    }
  }, 30_000);

  it("exports no query value, and the request's log line names its span", async () => {
    const collector = await startCollector();
    const secret = `SECRET-${randomUUID()}`;
    try {
      // As an OIDC callback's code and a token a client put in the query would be sent.
      const lines = await runCatalogueOnce(
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
        `/api/skills/library?code=${secret}&state=${secret}&access_token=${secret}`,
      );
      const server = exportedSpans(collector.received).find((s) => s.kind === SPAN_KIND_SERVER && attribute(s, 'url.path') === '/api/skills/library');
      expect(attribute(server!, 'url.query')).toBe('code=REDACTED&state=REDACTED&access_token=REDACTED');
      expect(collector.received.map((r) => r.body).join('\n')).not.toContain(secret);
      // Logs and traces join on the ids (docs/observability.md, "Logs and traces").
      expect(libraryRequestLine(lines)).toMatchObject({ trace_id: server!.traceId, span_id: server!.spanId });
      expect(lines.map((l) => JSON.stringify(l)).join('\n')).not.toContain(secret);
    } finally {
      collector.server.close();
    }
  }, 30_000);

  it('is off when no endpoint is configured', async () => {
    const collector = await startCollector();
    try {
      // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the SDK's own variable: an SDK started without our
      // configuration (tracing not really off) would honour it and export to the collector.
      const lines = await runCatalogueOnce({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` });
      expect(collector.received).toEqual([]);
      expect(libraryRequestLine(lines)).toBeDefined();
      expect(libraryRequestLine(lines)).not.toHaveProperty('trace_id');
    } finally {
      collector.server.close();
    }
  }, 30_000);
});

/** A span as OTLP/HTTP JSON carries it (ids in hex). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
}
type OtlpBatch = { resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }> };
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CONSUMER = 5;

function exportedSpans(received: Array<{ path: string; body: string }>): ExportedSpan[] {
  return received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => (JSON.parse(r.body) as OtlpBatch).resourceSpans)
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}
/** An OTLP/HTTP JSON batch with only the spans `keep` keeps. */
function keptSpans(body: string, keep: (span: ExportedSpan) => boolean): string {
  const batch = JSON.parse(body) as OtlpBatch;
  for (const rs of batch.resourceSpans) for (const ss of rs.scopeSpans) ss.spans = ss.spans.filter(keep);
  return JSON.stringify(batch);
}
const attribute = (span: ExportedSpan, key: string) => Object.values(span.attributes.find((a) => a.key === key)?.value ?? {})[0];

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * Traceparents the bus must ignore (a fresh trace, a normal answer), each under its own random
 * trace id so that a span continuing one of them would show: malformed, out of W3C's rules,
 * oversized (a later version's fields past libs/observability's bound), and sent twice.
 */
function unusableTraceparents(): Array<{ what: string; traceId: string; headers: Headers }> {
  const one = (what: string, make: (traceId: string) => string) => {
    const traceId = hex(16);
    return { what, traceId, headers: new Headers({ traceparent: make(traceId) }) };
  };
  const twice = hex(16);
  return [
    one('garbage', (t) => `garbage-${t}`),
    one('upper-case hex', (t) => `00-${t.toUpperCase()}-${hex(8)}-01`),
    one('version 00 with more fields', (t) => `00-${t}-${hex(8)}-01-more`),
    one('version ff', (t) => `ff-${t}-${hex(8)}-01`),
    one('a later version of 4,000 characters', (t) => `01-${t}-${hex(8)}-01-${'x'.repeat(4000)}`),
    {
      what: 'two traceparent headers',
      traceId: twice,
      headers: new Headers([
        ['traceparent', `00-${twice}-${hex(8)}-01`],
        ['traceparent', `00-${twice}-${hex(8)}-01`],
      ]),
    },
  ];
}

describe('a trace from publish through Kafka to delivery and receive (docs/observability.md)', () => {
  it("continues the producer's trace into the publish span, which is the parent of the delivery span and a link of the receive span, with bounded attributes", async () => {
    const telling = () => ({
      ...(som.examples['telling.started'] as Record<string, unknown>),
      message_id: randomUUID(),
      correlation_id: `c-${randomUUID()}`,
      occurred_at: new Date().toISOString(),
    });
    const message = telling();
    // The producer's own trace: the gateway's request span continues it, as a child of its span.
    const traceId = hex(16);
    const producerSpanId = hex(8);
    const unusable = unusableTraceparents().map((u) => ({ ...u, message: telling() }));
    // The enqueue spans of this test's messages; not those of the records already on the shared topic.
    const ours = new Set<string>([message, ...unusable.map((u) => u.message)].map((m) => m.message_id));
    const collector = await startCollector((span) => span.name !== 'delivery enqueue' || ours.has(attribute(span, 'messaging.message.id') as string));
    const bus = await startBus({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const busApi = createOpenApiChecker(openapi.bus);
    const secrets: string[] = [];
    let tenants: TenantFixture | undefined;
    try {
      await deliveryCaughtUp(bus);
      tenants = await TenantFixture.create(bus);
      const tenant = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: ['telling.started'] });
      const producerToken = await tenants.token(tenant.producer);
      const consumerToken = await tenants.token(tenant.consumer);
      secrets.push(producerToken, consumerToken);
      const publishPath = `/v1/tenants/${tenant.workspaceId}/messages`;
      const published = await fetchObserved(`${bus.busUrl}${publishPath}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${producerToken}`, 'Content-Type': 'application/json', traceparent: `00-${traceId}-${producerSpanId}-01` },
        body: JSON.stringify(message),
      });
      busApi.check('POST', publishPath, published);
      expect(published.status).toBe(202);

      const receivePath = `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.clientId}/messages`;
      const received = await fetchObserved(`${bus.busUrl}${receivePath}?wait_seconds=20`, { headers: { Authorization: `Bearer ${consumerToken}` } });
      busApi.check('GET', receivePath, received);
      const messages = (received.body as { messages: Array<{ message_id: string; receipt_handle: string }> }).messages;
      expect(messages.map((m) => m.message_id)).toEqual([message.message_id]);
      secrets.push(messages[0]!.receipt_handle);

      // An unusable traceparent is ignored: a normal 202, and the request starts a trace of its own.
      for (const u of unusable) {
        const headers = new Headers(u.headers);
        headers.set('Authorization', `Bearer ${producerToken}`);
        headers.set('Content-Type', 'application/json');
        const res = await fetchObserved(`${bus.busUrl}${publishPath}`, { method: 'POST', headers, body: JSON.stringify(u.message) });
        busApi.check('POST', publishPath, res);
        expect([u.what, res.status]).toEqual([u.what, 202]);
      }
      // Delivered (so their enqueue spans exist) before the bus stops and flushes its spans.
      const delivered = new Set<string>();
      await eventually(
        async () => {
          const res = await fetchObserved(`${bus.busUrl}${receivePath}?max_messages=10&wait_seconds=1`, {
            headers: { Authorization: `Bearer ${consumerToken}` },
          });
          for (const m of (res.body as { messages: Array<{ message_id: string }> }).messages) delivered.add(m.message_id);
          return delivered;
        },
        (ids) => unusable.every((u) => ids.has(u.message.message_id as string)),
        { what: 'every message published with an unusable traceparent received' },
      );
    } finally {
      await tenants?.close();
      // SIGTERM: the process flushes its last batch of spans before it exits.
      await bus.stop();
      collector.server.close();
    }

    const spans = exportedSpans(collector.received);
    const publish = spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER);
    expect(publish).toMatchObject({ traceId, parentSpanId: producerSpanId });
    const enqueue = spans.find((s) => s.name === 'delivery enqueue' && s.traceId === traceId);
    expect(enqueue).toMatchObject({ parentSpanId: publish!.spanId, kind: SPAN_KIND_CONSUMER });
    // OpenTelemetry's messaging conventions on the send, process and receive spans.
    const messaging = (span: ExportedSpan) =>
      Object.fromEntries(
        ['messaging.system', 'messaging.operation.name', 'messaging.operation.type', 'messaging.destination.name'].map((key) => [key, attribute(span, key)]),
      );
    expect(messaging(publish!)).toEqual({
      'messaging.system': 'kafka',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'bus.messages.v1',
    });
    expect(attribute(publish!, 'messaging.message.id')).toBe(message.message_id);
    expect(messaging(enqueue!)).toEqual({
      'messaging.system': 'kafka',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'bus.messages.v1',
    });
    expect(attribute(enqueue!, 'messaging.message.id')).toBe(message.message_id);
    expect(attribute(enqueue!, 'bus.delivery.outcome')).toBe('enqueued');
    const receive = spans.find((s) => s.name === 'pull receive' && (s.links ?? []).some((l) => l.traceId === traceId));
    expect(receive?.links).toEqual([expect.objectContaining({ traceId, spanId: publish!.spanId })]);
    expect(messaging(receive!)).toEqual({
      'messaging.system': 'kafka',
      'messaging.operation.name': 'receive',
      'messaging.operation.type': 'receive',
      'messaging.destination.name': attribute(receive!, 'bus.consumer_id'),
    });
    // The receive belongs to its own request's trace; the publish is a link, not its parent.
    expect(receive!.traceId).not.toBe(traceId);
    for (const u of unusable) {
      const enqueued = spans.find((s) => s.name === 'delivery enqueue' && attribute(s, 'messaging.message.id') === u.message.message_id);
      const request = spans.find((s) => s.kind === SPAN_KIND_SERVER && s.spanId === enqueued?.parentSpanId);
      // A root span of a fresh trace: neither the trace id sent nor a parent.
      expect({ what: u.what, fresh: request !== undefined && request.traceId !== u.traceId && !request.parentSpanId }).toEqual({ what: u.what, fresh: true });
    }
    // Never a body, a token or a receipt handle in a span.
    for (const span of spans) {
      const exported = JSON.stringify(span);
      for (const secret of [...secrets, message.correlation_id, message.occurred_at as string]) expect(exported).not.toContain(secret);
    }
  }, 150_000);
});

const OTELCOL_SH = path.join(REPO_ROOT, 'deploy/local/otelcol.sh');
const goCheck = spawnSync('bash', [OTELCOL_SH, '--check'], { encoding: 'utf8' });
if (goCheck.status !== 0) {
  console.warn(`SKIPPED: the trace through a real OpenTelemetry Collector, which needs Go to build: ${goCheck.stderr.trim()}`);
}

/**
 * The spans of one trace in what the Collector's file exporter wrote (a line of OTLP JSON per batch),
 * read line by line: the file also holds a span per record of the shared topic's history.
 */
async function spansOfTrace(file: string, traceId: string): Promise<ExportedSpan[]> {
  const spans: ExportedSpan[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    spans.push(...exportedSpans([{ path: '/v1/traces', body: line }]).filter((s) => s.traceId === traceId));
  }
  return spans;
}

(goCheck.status === 0 ? describe : describe.skip)('the publish span through a real OpenTelemetry Collector (docs/observability.md)', () => {
  let collectorBinary = '';
  // deploy/local/otelcol.sh builds once (minutes cold) and then answers from its stamp at once.
  beforeAll(async () => {
    collectorBinary = (await promisify(execFile)('nice', ['-n', '10', 'bash', OTELCOL_SH], { maxBuffer: 1 << 20 })).stdout.trim();
  }, 20 * 60_000);

  it("arrives over OTLP/HTTP at the Collector's receiver with the producer's parent and the messaging attributes", async () => {
    await mkdir(path.join(REPO_ROOT, '.local'), { recursive: true });
    const dir = await mkdtemp(path.join(REPO_ROOT, '.local', 'otelcol-test-'));
    const port = await freePort();
    const spansFile = path.join(dir, 'spans.jsonl');
    const config = {
      receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${port}` } } } },
      exporters: { file: { path: spansFile } },
      // No metrics server of its own: its default port would collide with other runs.
      service: { telemetry: { metrics: { level: 'none' } }, pipelines: { traces: { receivers: ['otlp'], exporters: ['file'] } } },
    };
    // JSON is YAML: the Collector reads it as its configuration file.
    await writeFile(path.join(dir, 'config.yaml'), JSON.stringify(config));
    const collector = startProcess('bus-otelcol', collectorBinary, ['--config', `file:${path.join(dir, 'config.yaml')}`], {});
    const traceId = hex(16);
    const producerSpanId = hex(8);
    const message = {
      ...(som.examples['telling.started'] as Record<string, unknown>),
      message_id: randomUUID(),
      correlation_id: `c-${randomUUID()}`,
      occurred_at: new Date().toISOString(),
    };
    let tenants: TenantFixture | undefined;
    try {
      // The receiver answers a GET of its traces path with 405 once it listens.
      await waitForHttp(`http://127.0.0.1:${port}/v1/traces`, { status: 405, process: collector });
      const bus = await startBus({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
      try {
        // A delivery group still reading the shared topic's history exports a span per record, and the
        // SDK's bounded queue may drop the publish span among them.
        await deliveryCaughtUp(bus);
        tenants = await TenantFixture.create(bus);
        const tenant = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: ['telling.started'] });
        const producerToken = await tenants.token(tenant.producer);
        const published = await fetch(`${bus.busUrl}/v1/tenants/${tenant.workspaceId}/messages`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${producerToken}`, 'Content-Type': 'application/json', traceparent: `00-${traceId}-${producerSpanId}-01` },
          body: JSON.stringify(message),
        });
        expect(published.status).toBe(202);
      } finally {
        await tenants?.close();
        // SIGTERM: the bus flushes its last batch of spans to the Collector before it exits.
        await bus.stop();
      }
    } finally {
      // SIGTERM: the Collector drains its pipeline into the file before it exits.
      expect(await collector.stop('SIGTERM')).toBe(0);
    }
    try {
      const publish = (await spansOfTrace(spansFile, traceId)).find((s) => s.kind === SPAN_KIND_SERVER);
      expect(publish).toMatchObject({ traceId, parentSpanId: producerSpanId });
      expect(
        Object.fromEntries(
          ['messaging.system', 'messaging.operation.name', 'messaging.operation.type', 'messaging.destination.name', 'messaging.message.id'].map((key) => [
            key,
            attribute(publish!, key),
          ]),
        ),
      ).toEqual({
        'messaging.system': 'kafka',
        'messaging.operation.name': 'send',
        'messaging.operation.type': 'send',
        'messaging.destination.name': 'bus.messages.v1',
        'messaging.message.id': message.message_id,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
