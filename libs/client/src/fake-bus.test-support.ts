/**
 * A stand-in for the bus's HTTP answers in the client's unit tests: each request is recorded and
 * answered by the first responder whose route matches. The real bus drives the client in
 * test/client.test.ts.
 */
export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | null;
  body: string | undefined;
}

export type Responder = (request: SeenRequest, signal: AbortSignal | undefined) => Response | Promise<Response>;

export const TOKEN_PATH = '/v1/oauth/token';

/** A token whose payload names `tenant` (the client reads the workspace from it; the bus verifies it). */
export function fakeToken(tenant: string, n = 1): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ tenant, n })}.c2ln`;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function fakeBus(routes: Record<string, Responder | Responder[]>) {
  const seen: SeenRequest[] = [];
  const calls = new Map<string, number>();
  let tokensIssued = 0;
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const request: SeenRequest = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: new Headers(init?.headers).get('authorization'),
      body: init?.body === undefined ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(init.body as Uint8Array).toString('utf8'),
    };
    seen.push(request);
    const key = `${request.method} ${request.path}`;
    if (request.path === TOKEN_PATH && !(key in routes)) {
      tokensIssued += 1;
      return json(200, { access_token: fakeToken('wworkspace234', tokensIssued), token_type: 'Bearer', expires_in: 3600 });
    }
    const route = routes[key];
    if (!route) return json(404, { accepted: false, violations: [{ source: 'policy', rule: 'route.not_found', message: key }] });
    const n = calls.get(key) ?? 0;
    calls.set(key, n + 1);
    const responder = Array.isArray(route) ? (route[Math.min(n, route.length - 1)] as Responder) : route;
    return responder(request, init?.signal ?? undefined);
  }) as typeof fetch;
  return { fetch: fetchFn, seen, tokensIssued: () => tokensIssued, calls: (key: string) => calls.get(key) ?? 0 };
}
