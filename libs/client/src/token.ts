import { BusUnreachableError, TokenRequestError } from './errors';
import { pause, retryAfterSeconds } from './wait';

export interface ClientOptions {
  /** The bus's base address, e.g. https://bus.example or http://127.0.0.1:8080 (no /v1). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Renew the token this long before it expires (default 60 s; docs/api.md#token-requests: reuse it, fetch a new one shortly before expiry). */
  renewBeforeSeconds?: number;
  /** Requests made at most for one call when the bus answers 429/503 or cannot be reached (default 5). */
  maxAttempts?: number;
  /** The longest wait between two attempts (default 30 s); a Retry-After above it ends the retries. */
  maxRetryDelayMs?: number;
  /** Replaceable for tests. */
  fetch?: typeof fetch;
  now?: () => Date;
  pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface Token {
  value: string;
  expiresAt: number;
  /** The token's `tenant` claim: the workspace the routes are for. */
  workspaceId: string;
}

/**
 * The access token of one connection (docs/api.md#token-response, #token-requests): fetched with client credentials (HTTP Basic),
 * cached, and fetched again `renewBeforeSeconds` before it expires. Callers that ask at once share
 * one token request. `invalidate` forgets it (the bus refused it: a rotation ended it).
 */
export class TokenSource {
  private current: Token | undefined;
  private pending: Promise<Token> | undefined;
  private readonly fetch: typeof fetch;
  private readonly now: () => Date;
  private readonly pause: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: ClientOptions) {
    this.fetch = options.fetch ?? ((...args) => fetch(...args));
    this.now = options.now ?? (() => new Date());
    this.pause = options.pause ?? pause;
  }

  /** A token valid for at least `renewBeforeSeconds` more, and the workspace it is for. */
  async get(): Promise<{ token: string; workspaceId: string }> {
    const renewBeforeMs = (this.options.renewBeforeSeconds ?? 60) * 1000;
    const current = this.current;
    if (current && current.expiresAt - renewBeforeMs > this.now().getTime()) return { token: current.value, workspaceId: current.workspaceId };
    this.pending ??= this.request().finally(() => {
      this.pending = undefined;
    });
    const fresh = await this.pending;
    return { token: fresh.value, workspaceId: fresh.workspaceId };
  }

  invalidate(): void {
    this.current = undefined;
  }

  private async request(): Promise<Token> {
    const { clientId, clientSecret } = this.options;
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const maxAttempts = this.options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetch(new URL('/v1/oauth/token', this.options.baseUrl), {
          method: 'POST',
          headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
      } catch (err) {
        if (attempt >= maxAttempts) throw new BusUnreachableError(`the token route could not be reached (${attempt} attempts)`, { cause: err });
        await this.pause(backoffMs(attempt, this.options.maxRetryDelayMs));
        continue;
      }
      const text = await res.text();
      const body = parseJson(text);
      if (res.status === 200 && isTokenResponse(body)) {
        const issuedAt = this.now().getTime();
        const token = { value: body.access_token, expiresAt: issuedAt + body.expires_in * 1000, workspaceId: tenantOf(body.access_token) };
        this.current = token;
        return token;
      }
      const waitSeconds = res.status === 429 || res.status === 503 ? retryAfterSeconds(res.headers, this.now()) : undefined;
      const waitMs = waitSeconds === undefined ? backoffMs(attempt, this.options.maxRetryDelayMs) : waitSeconds * 1000;
      const retriable = res.status === 429 || res.status >= 500;
      if (!retriable || attempt >= maxAttempts || waitMs > (this.options.maxRetryDelayMs ?? 30_000)) {
        const oauth = body as { error?: unknown; error_description?: unknown; violations?: Array<{ rule?: unknown; message?: unknown }> } | undefined;
        const error =
          typeof oauth?.error === 'string' ? oauth.error : typeof oauth?.violations?.[0]?.rule === 'string' ? oauth.violations[0].rule : `http_${res.status}`;
        const description =
          typeof oauth?.error_description === 'string'
            ? oauth.error_description
            : typeof oauth?.violations?.[0]?.message === 'string'
              ? oauth.violations[0].message
              : text.slice(0, 200);
        throw new TokenRequestError(res.status, error, description);
      }
      await this.pause(waitMs);
    }
  }
}

/** Exponential backoff for an answer that does not say how long to wait: 0.5 s, 1 s, 2 s, … up to the cap. */
export function backoffMs(attempt: number, capMs = 30_000): number {
  return Math.min(capMs, 500 * 2 ** (attempt - 1));
}

export function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function isTokenResponse(body: unknown): body is { access_token: string; expires_in: number } {
  const b = body as { access_token?: unknown; expires_in?: unknown } | undefined;
  return typeof b?.access_token === 'string' && typeof b.expires_in === 'number';
}

/** The `tenant` claim of a bus token (docs/api.md#access-token), read without verifying: the bus verifies every token itself. */
function tenantOf(jwt: string): string {
  const payload = parseJson(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { tenant?: unknown } | undefined;
  if (typeof payload?.tenant !== 'string') throw new TokenRequestError(200, 'invalid_token', 'the token has no tenant claim');
  return payload.tenant;
}
