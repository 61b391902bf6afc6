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

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service },
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
