import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { eventually } from '@bus/testing';
import { createLogger } from './logger';
import { startTracing, type Tracing } from './tracing';

function logged() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: 'test',
    level: 'info',
    destination: new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }),
  });
  return { logger, lines };
}

// In order: tracing is started (for the rest of this file's process) by the second test.
describe('trace ids in log lines', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | undefined;
  afterAll(() => tracing?.shutdown());

  it('writes none while tracing is off', () => {
    const { logger, lines } = logged();
    trace.getTracer('test').startActiveSpan('work', (span) => {
      logger.info('inside');
      span.end();
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
    expect(lines[0]).not.toHaveProperty('span_id');
  });

  it('writes the trace_id and span_id of the active span once tracing is on, and none outside a span', async () => {
    tracing = startTracing({ serviceName: 'test', otlpEndpoint: undefined, spans: new SimpleSpanProcessor({ exporter }) });
    const { logger, lines } = logged();
    trace.getTracer('test').startActiveSpan('work', (span) => {
      logger.info('inside');
      span.end();
    });
    logger.info('outside');
    // The SDK exports once the resource's detected attributes are in.
    const [span] = await eventually(
      async () => exporter.getFinishedSpans(),
      (spans) => spans.length === 1,
      { what: 'the span exported' },
    );
    expect(lines.map(({ msg, trace_id, span_id }) => ({ msg, trace_id, span_id }))).toEqual([
      { msg: 'inside', trace_id: span!.spanContext().traceId, span_id: span!.spanContext().spanId },
      { msg: 'outside', trace_id: undefined, span_id: undefined },
    ]);
    expect(span!.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
