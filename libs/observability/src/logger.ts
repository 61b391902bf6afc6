import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that must never reach a log line: credentials, tokens and message bodies. Request logging in
 * libs/http logs neither headers nor bodies in the first place; this list is the second fence for code
 * that logs an object carelessly.
 */
const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'client_secret',
  'secret',
  'password',
  'access_token',
  'token',
  'body',
  'req.body',
  'payload',
  '*.client_secret',
  '*.secret',
  '*.password',
  '*.access_token',
  '*.token',
  '*.body',
  '*.payload',
];

export interface LoggerOptions {
  service: string;
  level: string;
  /** Where lines go; stdout when omitted. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

let tracingOn = false;

/** Called by startTracing: from then on, lines written within a span carry its ids (traceIds). */
export function logTraceIds(): void {
  tracingOn = true;
}

/**
 * `trace_id` and `span_id` of the span active where a line is written (W3C hex, as the exported spans
 * carry them), so that a log line joins its trace; nothing outside a span or with tracing off.
 */
function traceIds(): Record<string, string> {
  if (!tracingOn) return {};
  const span = trace.getActiveSpan()?.spanContext();
  return span !== undefined && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service },
      mixin: traceIds,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // `err.cause` as an object of its own (type, message, code, stack, and an AggregateError's
      // errors), not only folded into the message: a 503's cause is what an operator needs to see.
      serializers: { err: pino.stdSerializers.errWithCause },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}
