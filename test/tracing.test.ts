import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, freePort, requireEnv, startNodeProcess, waitForHttp } from '@bus/testing';
import { startBus } from './support/bus';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture } from './support/tenants';

/** A stand-in OTLP/HTTP collector: records what each POST carried. */
async function startCollector(): Promise<{ url: string; received: Array<{ path: string; body: string }>; server: Server }> {
  const received: Array<{ path: string; body: string }> = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    received.push({ path: req.url ?? '', body });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

async function runCatalogueOnce(env: Record<string, string>): Promise<void> {
  const port = await freePort();
  const proc = startNodeProcess('services/catalogue/dist/main.js', { HOST: '127.0.0.1', PORT: String(port), REDIS_URL: requireEnv('REDIS_URL'), ...env });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, { process: proc });
  await fetch(`http://127.0.0.1:${port}/api/skills/library`);
  // Spans leave in batches; SIGTERM's shutdown flushes the last batch before the process exits.
  expect(await proc.stop('SIGTERM')).toBe(0);
}

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

  it('is off when no endpoint is configured', async () => {
    const collector = await startCollector();
    try {
      // OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the SDK's own variable: an SDK started without our
      // configuration (tracing not really off) would honour it and export to the collector.
      await runCatalogueOnce({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` });
      expect(collector.received).toEqual([]);
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
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CONSUMER = 5;

function exportedSpans(received: Array<{ path: string; body: string }>): ExportedSpan[] {
  return received
    .filter((r) => r.path === '/v1/traces')
    .flatMap((r) => (JSON.parse(r.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }> }).resourceSpans)
    .flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
}
const attribute = (span: ExportedSpan, key: string) => Object.values(span.attributes.find((a) => a.key === key)?.value ?? {})[0];

describe('a trace from publish through Kafka to delivery and receive (DESIGN §6)', () => {
  it('makes the publish request the parent of the delivery span and a link of the receive span, with bounded attributes', async () => {
    const collector = await startCollector();
    const bus = await startBus({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const busApi = createOpenApiChecker(openapi.bus);
    const message = { ...(som.examples['telling.started'] as Record<string, unknown>), message_id: randomUUID(), correlation_id: `c-${randomUUID()}`, occurred_at: new Date().toISOString() };
    // The producer's own trace: the gateway's request span continues it.
    const traceId = randomBytes(16).toString('hex');
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
        headers: { Authorization: `Bearer ${producerToken}`, 'Content-Type': 'application/json', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
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
    } finally {
      await tenants?.close();
      // SIGTERM: the process flushes its last batch of spans before it exits.
      await bus.stop();
      collector.server.close();
    }

    const spans = exportedSpans(collector.received);
    const publish = spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND_SERVER);
    expect(publish).toBeDefined();
    const enqueue = spans.find((s) => s.name === 'delivery enqueue' && s.traceId === traceId);
    expect(enqueue).toMatchObject({ parentSpanId: publish!.spanId, kind: SPAN_KIND_CONSUMER });
    expect(attribute(enqueue!, 'messaging.system')).toBe('kafka');
    expect(attribute(enqueue!, 'messaging.message.id')).toBe(message.message_id);
    expect(attribute(enqueue!, 'bus.delivery.outcome')).toBe('enqueued');
    const receive = spans.find((s) => s.name === 'pull receive' && (s.links ?? []).some((l) => l.traceId === traceId));
    expect(receive?.links).toEqual([expect.objectContaining({ traceId, spanId: publish!.spanId })]);
    // The receive belongs to its own request's trace; the publish is a link, not its parent.
    expect(receive!.traceId).not.toBe(traceId);
    // Never a body, a token or a receipt handle in a span.
    const exported = JSON.stringify(spans);
    for (const secret of [...secrets, message.correlation_id, message.occurred_at as string]) expect(exported).not.toContain(secret);
  }, 150_000);
});
