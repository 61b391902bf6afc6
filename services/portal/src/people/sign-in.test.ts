import * as oidc from 'openid-client';
import { callbackFailure, returnPathOf } from './sign-in';

describe('the page a sign-in returns to (returnPathOf)', () => {
  it.each([
    ['/portal/workspaces/wabcdefghijk2', '/portal/workspaces/wabcdefghijk2'],
    ['/portal/connections/c.2..x', '/portal/connections/c.2..x'],
    [
      '/portal/trace?workspace=wabcdefghijk2&message_id=6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f',
      '/portal/trace?workspace=wabcdefghijk2&message_id=6f1c2a4e-8b7d-4c3a-9e2f-1a2b3c4d5e6f',
    ],
  ])('returns to a page of the portal: %s', (asked, back) => {
    expect(returnPathOf(asked)).toBe(back);
  });

  it.each([
    ['another origin', 'https://evil.example/portal/'],
    ['a protocol-relative address', '//evil.example/portal/'],
    ['a second slash after /portal/', '/portal//evil.example'],
    ['a backslash', '/portal/\\evil.example'],
    ['a path outside the portal', '/api/portal/me'],
    ['a dot-dot segment', '/portal/../api/admin/organisations'],
    ['a dot-dot segment at the end', '/portal/workspaces/..'],
    ['an encoded dot-dot segment', '/portal/%2e%2e/api/admin/organisations'],
    ['an upper-case encoded dot-dot segment', '/portal/%2E%2E/api/admin/organisations'],
    ['a half-encoded dot-dot segment', '/portal/.%2E/api/admin/organisations'],
    ['the other half-encoded dot-dot segment', '/portal/%2e./api/admin/organisations'],
    ['a dot-dot segment deeper down', '/portal/workspaces/../../api/admin/organisations'],
    ['a dot segment', '/portal/./workspaces'],
    ['an encoded dot segment', '/portal/%2e/workspaces'],
    ['a backslash before a dot-dot segment', '/portal/..\\api/admin/organisations'],
    ['a line break', '/portal/x\r\nSet-Cookie: a=b'],
    ['an overlong path', `/portal/${'a'.repeat(1000)}`],
    ['not a string', ['/portal/x']],
  ])('never returns to %s', (_what, asked) => {
    expect(returnPathOf(asked)).toBeUndefined();
  });
});

describe("a failed code exchange (callbackFailure), from openid-client's own errors", () => {
  const issuer = 'https://id.example';
  const state = 'the-state';
  const nonce = 'the-nonce';
  const verifier = oidc.randomPKCECodeVerifier();
  const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** An ID token as the provider would sign it; its signature is not checked on a token endpoint's answer over TLS. */
  const idToken = (claims: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: issuer, aud: 'bus-portal', sub: 'someone', iat: now, exp: now + 300, nonce, ...claims };
    return `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(payload)}.${Buffer.from('signature').toString('base64url')}`;
  };
  const tokens = (claims?: Record<string, unknown>) => Response.json({ access_token: 'at', token_type: 'Bearer', id_token: idToken(claims) });

  /** The status the portal answers a callback with these parameters, the provider's token endpoint answering `token`. */
  async function answered(parameters: string, token: (signal: AbortSignal) => Promise<Response> = async () => tokens()): Promise<number> {
    const config = new oidc.Configuration(
      { issuer, token_endpoint: `${issuer}/token`, authorization_response_iss_parameter_supported: true },
      'bus-portal',
      'a-client-secret-of-enough-length',
    );
    config.timeout = 0.2;
    config[oidc.customFetch] = (_url, options) => token(options.signal as AbortSignal);
    const failure = await oidc
      .authorizationCodeGrant(config, new URL(`https://portal.example/portal/callback?${parameters}`), {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      })
      .then(
        () => undefined,
        (err: unknown) => callbackFailure(err),
      );
    return failure?.status ?? 200;
  }
  const callback = `code=the-code&state=${state}&iss=${encodeURIComponent(issuer)}`;

  it('completes a sign-in with nothing wrong (the cases below differ from it by one thing)', async () => {
    expect(await answered(callback)).toBe(200);
  });

  it.each([
    ['a wrong iss', `code=the-code&state=${state}&iss=https%3A%2F%2Fother.example`],
    ['no iss', `code=the-code&state=${state}`],
    ['a repeated code', `${callback}&code=extra`],
    ['a repeated iss', `${callback}&iss=${encodeURIComponent(issuer)}`],
    ['no code', `state=${state}&iss=${encodeURIComponent(issuer)}`],
    ['an error the provider sent back', `error=access_denied&state=${state}&iss=${encodeURIComponent(issuer)}`],
    ["an implicit flow's ID token", `${callback}&id_token=x`],
  ])('is 400 portal.sign_in_failed for a callback with %s', async (_what, parameters) => {
    expect(await answered(parameters)).toBe(400);
  });

  it.each<[string, () => Response]>([
    ['refuses the code (invalid_grant)', () => Response.json({ error: 'invalid_grant' }, { status: 400 })],
    ['answers an ID token for another sign-in (nonce)', () => tokens({ nonce: 'another' })],
    ['answers an ID token of another issuer', () => tokens({ iss: 'https://other.example' })],
    ['answers an ID token for another client (aud)', () => tokens({ aud: 'another-client' })],
    ['answers an expired ID token', () => tokens({ iat: 1_000_000, exp: 1_000_300 })],
    ['answers an ID token that is not a JWT', () => Response.json({ access_token: 'at', token_type: 'Bearer', id_token: 'not.a-jwt' })],
    ['answers no ID token', () => Response.json({ access_token: 'at', token_type: 'Bearer' })],
  ])('is 400 portal.sign_in_failed when the provider %s', async (_what, token) => {
    expect(await answered(callback, async () => token())).toBe(400);
  });

  it.each<[string, (signal: AbortSignal) => Promise<Response>]>([
    [
      'is unreachable',
      () => Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })),
    ],
    ['does not answer in time', (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)))],
    ['fails (503 with an OAuth error)', async () => Response.json({ error: 'temporarily_unavailable' }, { status: 503 })],
    ['fails (502 from a proxy)', async () => new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })],
    ['answers a page, not JSON', async () => new Response('<html>maintenance</html>', { status: 200, headers: { 'content-type': 'text/html' } })],
    ["refuses the portal's own client (invalid_client)", async () => Response.json({ error: 'invalid_client' }, { status: 401 })],
  ])('is 503 portal.unavailable when the provider %s', async (_what, token) => {
    expect(await answered(callback, token)).toBe(503);
  });
});
