import { BusRefusedError, BusUnreachableError, type Violation } from './errors';
import { backoffMs, parseJson, type ClientOptions, type TokenSource } from './token';
import { pause as realPause, retryAfterSeconds } from './wait';

export interface BusAnswer<T> {
  status: number;
  body: T;
  /** The answer as sent: what a non-JSON answer (the story export's NDJSON) is read from. */
  text: string;
  headers: Headers;
  /** Requests made, the retries included. */
  attempts: number;
}

export interface BusRequest {
  method: 'GET' | 'POST';
  /** The path under the workspace, e.g. `/messages` for /v1/tenants/{t}/messages. */
  path: string;
  query?: Record<string, string>;
  /** Sent as it is with Content-Type application/json. */
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/**
 * One call to a workspace route with the connection's token, retried where a retry is safe and
 * asked for: 503 (nothing was carried out) and 429 after Retry-After (or the RateLimit field's reset),
 * and a request that never got an answer. A publish resends the same bytes, so the same message_id:
 * the bus answers a resend of an accepted message 200 duplicate, never a second copy. A 401 fetches a
 * new token once (a rotation may have ended the cached one). Bounded by maxAttempts and
 * maxRetryDelayMs; what is left is thrown as BusRefusedError (bus body) or BusUnreachableError.
 */
export async function busRequest<T>(tokens: TokenSource, options: ClientOptions, request: BusRequest): Promise<BusAnswer<T>> {
  const doFetch = options.fetch ?? ((...args) => fetch(...args));
  const wait = options.pause ?? realPause;
  const now = options.now ?? (() => new Date());
  const maxAttempts = options.maxAttempts ?? 5;
  const maxDelayMs = options.maxRetryDelayMs ?? 30_000;
  let renewedToken = false;
  for (let attempt = 1; ; attempt++) {
    const { token, workspaceId } = await tokens.get();
    const url = new URL(`/v1/tenants/${encodeURIComponent(workspaceId)}${request.path}`, options.baseUrl);
    for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
    let res: Response;
    try {
      res = await doFetch(url, {
        method: request.method,
        headers: { Authorization: `Bearer ${token}`, ...(request.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        ...(request.body !== undefined ? { body: request.body } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
    } catch (err) {
      if (request.signal?.aborted || attempt >= maxAttempts)
        throw new BusUnreachableError(`${request.method} ${url.pathname}: no answer (${attempt} attempts)`, { cause: err });
      await wait(backoffMs(attempt, maxDelayMs), request.signal);
      continue;
    }
    const text = await res.text();
    const body = parseJson(text);
    if (res.status < 300) return { status: res.status, body: body as T, text, headers: res.headers, attempts: attempt };

    if (res.status === 401 && !renewedToken) {
      renewedToken = true;
      tokens.invalidate();
      continue;
    }
    const retriable = res.status === 429 || res.status === 503;
    const waitSeconds = retriable ? retryAfterSeconds(res.headers, now()) : undefined;
    const waitMs = waitSeconds === undefined ? backoffMs(attempt, maxDelayMs) : waitSeconds * 1000;
    if (retriable && attempt < maxAttempts && waitMs <= maxDelayMs && !request.signal?.aborted) {
      await wait(waitMs, request.signal);
      continue;
    }
    const violations = (body as { violations?: unknown } | undefined)?.violations;
    if (Array.isArray(violations) && violations.length > 0) throw new BusRefusedError(res.status, violations as Violation[], attempt);
    throw new BusUnreachableError(`${request.method} ${url.pathname} answered ${res.status} without a bus body: ${text.slice(0, 200)}`);
  }
}
