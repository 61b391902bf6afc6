import { propagation, ROOT_CONTEXT, SpanStatusCode, type Context, type Span, type TextMapPropagator } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ConfigError, loadConfig, processConfig, type Env } from '@bus/config';

export interface Tracing {
  readonly enabled: boolean;
  shutdown(): Promise<void>;
}

const DISABLED: Tracing = { enabled: false, shutdown: async () => {} };

/**
 * OpenTelemetry, off unless an OTLP/HTTP endpoint is configured: with no endpoint nothing is
 * registered and the @opentelemetry/api calls in the code are no-ops.
 */
export function startTracing(opts: { serviceName: string; otlpEndpoint: string | undefined }): Tracing {
  if (!opts.otlpEndpoint) return DISABLED;
  const sdk = new NodeSDK({
    serviceName: opts.serviceName,
    textMapPropagator: boundedTraceContext(),
    traceExporter: new OTLPTraceExporter({ url: `${opts.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [new HttpInstrumentation()],
    // Traces only: metrics are prom-client's (/metrics) and logs are pino's (stdout).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}

/**
 * The longest traceparent read. Version 00 is 55 characters; a later version may append fields
 * (W3C Trace Context §3.2.4), but none needs more than this.
 */
export const TRACEPARENT_MAX_CHARS = 256;

/**
 * W3C Trace Context from a caller's headers, bounded: a traceparent over TRACEPARENT_MAX_CHARS or
 * sent more than once is ignored (the request starts a fresh trace), as the W3C parser ignores a
 * malformed one; tracestate is kept to 32 members and 512 characters by the parser. Nothing else
 * is read from the caller (no baggage): the bus continues a producer's trace and no more.
 */
export function boundedTraceContext(): TextMapPropagator {
  const w3c = new W3CTraceContextPropagator();
  return {
    inject: (context, carrier, setter) => w3c.inject(context, carrier, setter),
    extract: (context, carrier, getter) => {
      const sent = getter.get(carrier, 'traceparent');
      const values = sent === undefined ? [] : typeof sent === 'string' ? [sent] : sent;
      // None: nothing to continue. More than one: W3C Trace Context says to ignore them all.
      if (values.length !== 1 || values[0]!.length > TRACEPARENT_MAX_CHARS) return context;
      return w3c.extract(context, carrier, getter);
    },
    fields: () => w3c.fields(),
  };
}

/**
 * For the first import of a composition root: instrumentation patches `http` as it loads, so it
 * must start before express and the server do. An invalid endpoint leaves tracing off here; the
 * root's full configuration check then stops the process naming the variable.
 */
export function startTracingFromEnv(serviceName: string, env: Env = process.env): Tracing {
  try {
    const { OTEL_EXPORTER_OTLP_ENDPOINT } = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: processConfig.OTEL_EXPORTER_OTLP_ENDPOINT }, env);
    return startTracing({ serviceName, otlpEndpoint: OTEL_EXPORTER_OTLP_ENDPOINT });
  } catch (err) {
    if (err instanceof ConfigError) return DISABLED;
    throw err;
  }
}

/**
 * The publish's trace context from a W3C traceparent (a Kafka record's header, a stored message's
 * column), as the parent of delivery's span or the source of a receive's links. The root context
 * when there is none or tracing is off (the global propagator is then a no-op).
 */
export function publishTraceContext(traceparent: string | null): Context {
  return traceparent === null ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Runs `work` in `span` and ends the span, marking it failed with the exception when `work` throws. */
export async function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
