import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, requireEnv, startNodeProcess, waitForHttp } from '@bus/testing';

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
