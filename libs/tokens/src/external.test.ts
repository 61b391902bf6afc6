import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, type JWTVerifyGetKey } from 'jose';
import { externalIssuerProblems, jwksUrlProblem, KeySetUnavailableError, unverifiedIssuer, verifyExternalToken, type ExternalIssuer } from './external';
import { TokenRejectedError } from './refusals';

const ISSUER: ExternalIssuer = {
  issuer: 'https://login.example.com/',
  jwksUrl: 'https://login.example.com/jwks',
  audiences: ['message-bus', 'other'],
  algorithms: ['ES256'],
  clientClaim: 'client_id',
  clockToleranceSeconds: 60,
};
const NOW = new Date('2026-11-23T03:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);

let keys: JWTVerifyGetKey;
let sign: (claims: Record<string, unknown>, header?: Record<string, unknown>) => Promise<string>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
  sign = (claims, header = {}) =>
    new SignJWT({ iss: ISSUER.issuer, aud: 'message-bus', client_id: 'newsroom', iat: nowSeconds, exp: nowSeconds + 300, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', ...header })
      .sign(privateKey);
});

const reason = async (token: Promise<string> | string, getKey = keys) => {
  try {
    await verifyExternalToken(await token, ISSUER, getKey, NOW);
    return 'accepted';
  } catch (err) {
    if (err instanceof TokenRejectedError) return err.reason;
    if (err instanceof KeySetUnavailableError) return 'unavailable';
    throw err;
  }
};

describe('external tokens', () => {
  it('verifies a token of the issuer and names its client', async () => {
    await expect(verifyExternalToken(await sign({ aud: ['x', 'other'] }), ISSUER, keys, NOW)).resolves.toMatchObject({ client: 'newsroom' });
    expect(unverifiedIssuer(await sign({}))).toBe(ISSUER.issuer);
  });

  it('refuses each broken rule with its reason', async () => {
    expect(await reason(sign({ iss: 'https://login.example.com' }))).toBe('issuer');
    expect(await reason(sign({ aud: 'someone' }))).toBe('audience');
    expect(await reason(sign({ exp: nowSeconds - 61 }))).toBe('expired');
    expect(await reason(sign({ exp: nowSeconds - 59 }))).toBe('accepted');
    expect(await reason(sign({ nbf: nowSeconds + 120 }))).toBe('not_yet_valid');
    expect(await reason(sign({ exp: undefined }))).toBe('claims');
    expect(await reason(sign({ client_id: 7 }))).toBe('claims');
    expect(await reason(sign({}, { kid: 'unknown' }))).toBe('unknown_key');
    expect(await reason(sign({}, { jku: 'https://evil.example/jwks' }))).toBe('header');
    expect(await reason('not.a.token')).toBe('malformed');
    const [header, payload] = (await sign({})).split('.');
    expect(await reason(`${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`)).toBe('signature');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
    expect(await reason(none)).toBe('algorithm');
  });

  it('tells a key set that cannot be fetched (503) from a bad token (401)', async () => {
    const down: JWTVerifyGetKey = async () => {
      throw new TypeError('fetch failed');
    };
    expect(await reason(sign({}), down)).toBe('unavailable');
  });

  it('accepts https JWKS URLs, and http only to loopback when allowed', () => {
    expect(jwksUrlProblem('https://login.example.com/jwks', false)).toBeUndefined();
    expect(jwksUrlProblem('http://127.0.0.1:9000/jwks', false)).toMatch(/https/);
    expect(jwksUrlProblem('http://127.0.0.1:9000/jwks', true)).toBeUndefined();
    expect(jwksUrlProblem('http://[::1]:9000/jwks', true)).toBeUndefined();
    expect(jwksUrlProblem('http://login.example.com/jwks', true)).toMatch(/loopback/);
    expect(jwksUrlProblem('https://user:pw@login.example.com/jwks', false)).toMatch(/user/);
    expect(
      externalIssuerProblems({ ...ISSUER, algorithms: ['HS256' as 'ES256'], audiences: [], clockToleranceSeconds: 301 }, { allowHttpLoopback: false }),
    ).toEqual([
      'audiences must name at least one non-empty audience',
      expect.stringContaining('HS256 not allowed'),
      'clock_tolerance_seconds must be a whole number from 0 to 300',
    ]);
  });
});
