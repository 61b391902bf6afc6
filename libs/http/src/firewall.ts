import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { HttpError } from './errors';

/** 403 request.blocked (docs/api.md#errors): the request looks like an attack; the SOM content is never judged. */
export class RequestBlockedError extends HttpError {
  override readonly name = 'RequestBlockedError';
  constructor() {
    // Deliberately vague: telling a prober which pattern matched helps the prober.
    super(403, 'request.blocked', 'The request was refused as an attack pattern');
  }
}

/**
 * What the firewall refuses, on the request line and headers only (never the body, which is SOM
 * content the gateway judges): traversal and encoded traversal, NUL bytes and control characters
 * in the target, script or SQL injection in the query string, request targets over 2,048 bytes.
 * Methods are routing's business, not the firewall's: one no route serves is 405 on a known path
 * (TRACE included: nothing echoes a request back, so cross-site tracing has nothing to read) and 404
 * elsewhere; names Node's parser does not know (TRACK, DEBUG) are 400 request.malformed before any
 * route; CONNECT is routed like any other method (server.ts).
 */
const BLOCKED_TARGET = [
  /%2e%2e|%252e|\.%2e|%2e\./i, // encoded dots
  /%00/, // encoded NUL
  /%0d|%0a/i, // CR/LF injection
];
/** ../ and ..\ as a path segment; looked for in the target as sent and decoded once and twice (..%2F, ..%5C, ..%252F). */
const TRAVERSAL = /(?:^|[/\\])\.\.(?:[/\\]|$)/;
const BLOCKED_QUERY = [
  /<\s*script|javascript:|on(?:error|load)\s*=/i, // script injection
  /\bunion\b[\s+]+(?:all[\s+]+)?select\b|\bselect\b[\s+]+.+[\s+]+\bfrom\b|'\s*(?:or|and)\s*'?\d+'?\s*=\s*'?\d+|;\s*drop\s+table/i, // SQL injection
];
const MAX_TARGET_BYTES = 2048;

export function isAttackPattern(target: string): boolean {
  if (Buffer.byteLength(target) > MAX_TARGET_BYTES) return true;
  if (hasControlCharacter(target)) return true;
  if (BLOCKED_TARGET.some((pattern) => pattern.test(target))) return true;
  const once = percentDecode(target);
  if (TRAVERSAL.test(target) || TRAVERSAL.test(once) || TRAVERSAL.test(percentDecode(once))) return true;
  const query = target.includes('?') ? percentDecode(target.slice(target.indexOf('?') + 1).replace(/\+/g, ' ')) : '';
  return BLOCKED_QUERY.some((pattern) => pattern.test(query));
}

/** The bus host's firewall: mounted first on the bus listener, before limits and routing. */
export function requestFirewall(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    next(isAttackPattern(req.originalUrl) ? new RequestBlockedError() : undefined);
  };
}

/** NUL and the other C0 control characters, and DEL: never part of a request target. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Not fatal: bytes that are not UTF-8 read as U+FFFD. */
const UTF8 = new TextDecoder();

/**
 * Every run of well-formed escapes decoded on its own, so one bad escape elsewhere in the target
 * cannot leave the rest unread (decodeURIComponent gives up on the whole text). The app refuses such
 * a target before the firewall (400 request.malformed); this holds for any other caller too.
 */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => UTF8.decode(Buffer.from(run.replace(/%/g, ''), 'hex')));
}
