import { propagation, ROOT_CONTEXT, SpanStatusCode, type Context, type Span, type TextMapPropagator } from '@opentelemetry/api';
import { getNumberFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ConfigError, loadConfig, processConfig, type Env } from '@bus/config';
import { logTraceIds } from './logger';

export interface Tracing {
  readonly enabled: boolean;
  shutdown(): Promise<void>;
}

const DISABLED: Tracing = { enabled: false, shutdown: async () => {} };

/**
 * OpenTelemetry, off unless an OTLP/HTTP endpoint is configured: with no endpoint nothing is
 * registered and the @opentelemetry/api calls in the code are no-ops. Every span passes
 * queryRedacting before it is exported.
 */
export function startTracing(opts: {
  serviceName: string;
  otlpEndpoint: string | undefined;
  /** Where spans go instead of OTLP/HTTP (tests: an in-memory exporter); tracing is then on without an endpoint. */
  spans?: SpanProcessor;
}): Tracing {
  const spans = opts.spans ?? (opts.otlpEndpoint ? otlpBatches(opts.otlpEndpoint) : undefined);
  if (spans === undefined) return DISABLED;
  const sdk = new NodeSDK({
    serviceName: opts.serviceName,
    textMapPropagator: boundedTraceContext(),
    spanProcessors: [queryRedacting(), spans],
    instrumentations: [new HttpInstrumentation()],
    // Traces only: metrics are prom-client's (/metrics) and logs are pino's (stdout).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  logTraceIds();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}

/** OTLP/HTTP to `<endpoint>/v1/traces` in batches, tuned by the SDK's OTEL_BSP_* variables as NodeSDK's own exporter was. */
function otlpBatches(endpoint: string): SpanProcessor {
  const positive = (name: string) => {
    const value = getNumberFromEnv(name);
    return value !== undefined && value > 0 ? value : undefined;
  };
  return new BatchSpanProcessor({
    exporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }),
    maxQueueSize: positive('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: positive('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: positive('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: positive('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  });
}

/**
 * The attributes that carry a request's query string: `url.query` (server spans) and `url.full`
 * (client spans) under the stable HTTP semantic conventions that @opentelemetry/instrumentation-http
 * writes, and `http.target` and `http.url`, their names before them.
 */
const QUERY_ATTRIBUTES: Record<string, 'query' | 'url'> = { 'url.query': 'query', 'http.target': 'url', 'url.full': 'url', 'http.url': 'url' };

/** A query parameter name kept in a span: what looks like a name; anything else may be a value sent bare. */
const PARAMETER_NAME = /^[A-Za-z0-9_.[\]-]{1,32}$/;

/**
 * A query string (without its `?`) with every value dropped: `code=REDACTED&state=REDACTED`. Query
 * strings carry secrets (an OIDC callback's `code`, an `access_token` a client put there), and spans
 * leave the process; the names say which parameters a request had.
 */
export function redactQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return PARAMETER_NAME.test(name) ? `${name}=REDACTED` : 'REDACTED';
    })
    .join('&');
}

/** A URL or request target with its query string redacted (redactQuery); its fragment dropped. */
function redactUrlQuery(url: string): string {
  const hash = url.indexOf('#');
  const withoutFragment = hash === -1 ? url : url.slice(0, hash);
  const mark = withoutFragment.indexOf('?');
  return mark === -1 ? withoutFragment : `${withoutFragment.slice(0, mark)}?${redactQuery(withoutFragment.slice(mark + 1))}`;
}

/**
 * Redacts the query string in every span's URL attributes, as it starts (what the HTTP
 * instrumentation sets then) and as it ends (anything set later), before an exporter sees it.
 */
export function queryRedacting(): SpanProcessor {
  const redact = (span: Parameters<SpanProcessor['onStart']>[0]) => {
    for (const [key, kind] of Object.entries(QUERY_ATTRIBUTES)) {
      const value = span.attributes[key];
      if (typeof value !== 'string') continue;
      const redacted = kind === 'query' ? redactQuery(value) : redactUrlQuery(value);
      if (redacted !== value) span.setAttribute(key, redacted);
    }
  };
  return {
    onStart: redact,
    onEnding: redact,
    onEnd: () => {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
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
