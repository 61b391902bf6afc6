/**
 * The one error set of the HTTP edge. Code anywhere throws one of these (or a subclass defined next to
 * the code that owns the rule); the error middleware of `createHttpApp` is the only place that turns
 * an error into a status and a body.
 */

import { HttpError, type Violation, type ViolationSource } from '@bus/contracts';

export { HttpError, type Violation, type ViolationSource };

export class RouteNotFoundError extends HttpError {
  override readonly name = 'RouteNotFoundError';
  constructor(method: string, path: string) {
    super(404, 'route.not_found', `No route for ${method} ${path}`);
  }
}

/**
 * 405 method.not_allowed: the path exists but does not serve the method. `Allow` lists the methods
 * it does serve (RFC 9110 15.5.6), HEAD included wherever GET is.
 */
export class MethodNotAllowedError extends HttpError {
  override readonly name = 'MethodNotAllowedError';
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(405, 'method.not_allowed', `${path} does not serve ${method}; it serves ${allowed.join(', ')}`, 'policy', { Allow: allowed.join(', ') });
  }
}

/**
 * 400 request.malformed: what Node's HTTP parser refuses before any route sees the request (the
 * server's clientError: CR or NUL in a header, Content-Length with Transfer-Encoding, bad chunked
 * encoding, an unknown method), and what the app refuses before any route as no route could read it
 * as sent (app.ts). The connection is closed: after such a request nothing more on it is trusted.
 */
export class MalformedRequestError extends HttpError {
  override readonly name = 'MalformedRequestError';
  constructor(reason: string) {
    super(400, 'request.malformed', `The request is not well-formed HTTP/1.1: ${reason}`, 'policy', { Connection: 'close' });
  }
}

export class RequestHeadersTooLargeError extends HttpError {
  override readonly name = 'RequestHeadersTooLargeError';
  constructor() {
    super(431, 'request.headers_too_large', "The request line and headers are over the server's limit (16 KB)");
  }
}

export class RequestTimeoutError extends HttpError {
  override readonly name = 'RequestTimeoutError';
  constructor() {
    super(408, 'request.timeout', 'The request was not received in full in time');
  }
}

/** 415 request.content_encoding_unsupported: a Content-Encoding other than identity; bodies are read only as sent. */
export class ContentEncodingUnsupportedError extends HttpError {
  override readonly name = 'ContentEncodingUnsupportedError';
  constructor(encoding: string) {
    super(415, 'request.content_encoding_unsupported', `Content-Encoding ${encoding.slice(0, 64)} is not supported; send the body uncompressed`, 'policy', {
      'Accept-Encoding': 'identity',
    });
  }
}

/** 417 request.expectation_failed: an Expect header other than 100-continue (RFC 9110 10.1.1). */
export class ExpectationFailedError extends HttpError {
  override readonly name = 'ExpectationFailedError';
  constructor() {
    super(417, 'request.expectation_failed', 'The only expectation the bus meets is Expect: 100-continue');
  }
}

/** 400 request.invalid: a path or query parameter or a body is not what the route's OpenAPI operation admits. */
export class RequestInvalidError extends HttpError {
  override readonly name = 'RequestInvalidError';
  constructor(problem: string) {
    super(400, 'request.invalid', problem, 'conformance');
  }
}

/** 404 for a resource a route names that the caller's workspace does not have (message.unknown, story.unknown, run.unknown). */
export class ResourceUnknownError extends HttpError {
  override readonly name = 'ResourceUnknownError';
  constructor(rule: 'message.unknown' | 'story.unknown' | 'run.unknown', message: string) {
    super(404, rule, message);
  }
}

export class MessageTooLargeError extends HttpError {
  override readonly name = 'MessageTooLargeError';
  constructor(limitBytes: number) {
    super(413, 'message.too_large', `The body is over ${limitBytes} bytes`, 'conformance');
  }
}

/**
 * 503 with Retry-After: a dependency (Postgres, Kafka) failed, so nothing was carried out and the
 * client may retry. `cause` is the dependency's own error: the error middleware logs it once (warn,
 * pino `err` with its cause) so an operator sees why, while the answer says only what to do.
 */
export class DependencyUnavailableError extends HttpError {
  override readonly name: string = 'DependencyUnavailableError';
  constructor(rule: string, message: string, cause: unknown) {
    super(503, rule, message, 'policy', { 'Retry-After': '1' }, { cause });
  }
}

/**
 * Runs `work` against a dependency; whatever it throws becomes `unavailable(cause)`: the one way a
 * store turns its dependency's failure into the route's documented 503.
 */
export async function unavailableUnlessDone<T>(work: () => Promise<T>, unavailable: (cause: unknown) => DependencyUnavailableError): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw unavailable(err);
  }
}

/**
 * `target` with every method's failures turned into `unavailable(cause)`: for a store whose every
 * method is a call to its dependency, so that no method of it can answer a route with a 500 when the
 * dependency fails. An HttpError a method throws is already the route's answer (a conflict it
 * found, say) and passes through. Non-function properties pass through unchanged.
 */
export function unavailableOnAnyFailure<T extends object>(target: T, unavailable: (cause: unknown) => DependencyUnavailableError): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return (await (value as (...a: unknown[]) => unknown).apply(object, args)) as unknown;
        } catch (err) {
          throw err instanceof HttpError ? err : unavailable(err);
        }
      };
    },
  });
}

export class InternalError extends HttpError {
  override readonly name = 'InternalError';
  constructor() {
    super(500, 'internal.error', 'An internal error occurred; it has been logged with the request id');
  }
}

/** RFC 6749 §5.2 error codes the token route answers with. */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'temporarily_unavailable';

/**
 * A token-route refusal. Rendered as an RFC 6749 body ({error, error_description}) whatever the
 * app's own shape, because the token route shares the bus port with the Violation-shaped routes.
 */
export class OAuthError extends HttpError {
  override readonly name = 'OAuthError';
  constructor(
    status: number,
    readonly error: OAuthErrorCode,
    description: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(status, `oauth.${error}`, description, 'policy', headers);
  }
}

/** A refusal with several violations at once (docs/api.md#publish-responses: all violations are reported together). */
export class ViolationsError extends HttpError {
  override readonly name = 'ViolationsError';
  constructor(
    status: number,
    private readonly found: readonly Violation[],
    headers: Readonly<Record<string, string>> = {},
    /** Violations found beyond `found`, only counted. */
    private readonly omitted = 0,
  ) {
    const first = found[0];
    if (!first) throw new Error('ViolationsError needs at least one violation');
    super(status, first.rule, first.message, first.source, headers);
  }

  override violations(): Violation[] {
    return [...this.found];
  }

  override omittedViolations(): number {
    return this.omitted;
  }
}
