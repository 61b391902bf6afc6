import { createHmac, generateKeyPairSync, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, decodeJwt, importJWK, jwtVerify } from 'jose';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  audienceFor,
  authorizeBearer,
  buildClaims,
  decryptPrivateKey,
  encryptPrivateKey,
  generateSigningKey,
  hashSecret,
  importPublicJwk,
  newClientId,
  newClientSecret,
  newId,
  NotRegisteredError,
  secretMatches,
  signAccessToken,
  SigningKeyError,
  TenantMismatchError,
  thumbprint,
  TokenRejectedError,
  verifyAccessToken,
  type AccessTokenClaims,
  type BearerRequirement,
  type ConnectionState,
} from './index';

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const NOW = new Date('2026-11-22T10:00:00Z');
const audience = audienceFor('https://sandbox.bus.example');
const key = generateSigningKey();
const keys = new Map([[key.kid, importPublicJwk(key.publicJwk)]]);

function claims(overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims {
  return {
    ...buildClaims({
      audience,
      clientId: 'cabcdefghijk2',
      workspaceId: 'wabcdefghijk2',
      organisationId: 'oabcdefghijk2',
      appId: 'aabcdefghijk2',
      credentialVersion: 1,
      now: NOW,
    }),
    ...overrides,
  };
}

/** A compact JWS signed with any ES256 key and any header, as an attacker would build one. */
function es256(header: Record<string, unknown>, payload: unknown, privateKey: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const sig = cryptoSign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}

async function reason(token: string, now = NOW, aud = audience): Promise<string> {
  try {
    await verifyAccessToken(token, { keys, audience: aud, now });
  } catch (err) {
    if (err instanceof TokenRejectedError) return err.reason;
    throw err;
  }
  return 'accepted';
}

describe('ids and secrets (docs/api.md#connections-and-credentials)', () => {
  it('makes client ids of c + 12 characters of [a-z2-7], and other ids with their prefix', () => {
    const ids = new Set(Array.from({ length: 500 }, () => newClientId()));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(id).toMatch(/^c[a-z2-7]{12}$/);
    expect(newId('w')).toMatch(/^w[a-z2-7]{12}$/);
  });

  it('makes secrets sbs_ + 256 random bits', () => {
    const secret = newClientSecret();
    expect(secret).toMatch(/^sbs_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(4), 'base64url')).toHaveLength(32);
    expect(newClientSecret()).not.toBe(secret);
  });

  it('keeps only a hash and compares a presented secret with it', () => {
    const secret = newClientSecret();
    const hash = hashSecret(secret);
    expect(hash).not.toContain(secret.slice(4));
    expect(secretMatches(secret, hash)).toBe(true);
    expect(secretMatches(`${secret}x`, hash)).toBe(false);
    expect(secretMatches('', hash)).toBe(false);
    expect(secretMatches(secret, 'sha256:short')).toBe(false);
    expect(secretMatches(secret, 'bcrypt:whatever')).toBe(false);
  });
});

describe('claims (docs/api.md#access-token)', () => {
  it('are exactly the spec claims, exp one hour after iat', () => {
    const c = claims();
    expect(Object.keys(c).sort()).toEqual(['app', 'aud', 'credential_version', 'environment', 'exp', 'iat', 'iss', 'jti', 'org', 'sub', 'tenant'].sort());
    expect(c).toMatchObject({
      iss: 'https://sandbox.bus.example/v1/oauth',
      aud: 'https://sandbox.bus.example',
      environment: 'sandbox',
      iat: NOW.getTime() / 1000,
      exp: NOW.getTime() / 1000 + ACCESS_TOKEN_TTL_SECONDS,
    });
    expect(claims().jti).not.toBe(c.jti);
  });

  it('derive iss and aud from the base URL, with or without a trailing slash', () => {
    expect(audienceFor('https://preview.bus.example/')).toEqual({
      issuer: 'https://preview.bus.example/v1/oauth',
      audience: 'https://preview.bus.example',
      environment: 'sandbox',
    });
  });
});

describe('signing keys', () => {
  it('names a key by its RFC 7638 thumbprint and publishes the docs/api.md#resources.4 fields', async () => {
    expect(Object.keys(key.publicJwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    expect(key.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: key.kid });
    // An independent RFC 7638 implementation agrees.
    expect(await calculateJwkThumbprint(key.publicJwk, 'sha256')).toBe(key.kid);
    expect(thumbprint(key.publicJwk)).toBe(key.kid);
  });

  it('seals a private key with AES-256-GCM bound to its kid', () => {
    const encryptionKey = randomBytes(32);
    const sealed = encryptPrivateKey(key.privateKey, key.kid, encryptionKey);
    expect(sealed).toMatch(/^v1\./);
    const opened = decryptPrivateKey(sealed, key.kid, encryptionKey);
    expect(opened.export({ format: 'jwk' })).toEqual(key.privateKey.export({ format: 'jwk' }));
    expect(() => decryptPrivateKey(sealed, key.kid, randomBytes(32))).toThrow(SigningKeyError);
    expect(() => decryptPrivateKey(sealed, 'another-kid', encryptionKey)).toThrow(SigningKeyError);
    expect(() => encryptPrivateKey(key.privateKey, key.kid, randomBytes(16))).toThrow(SigningKeyError);
  });
});

describe('a signed access token', () => {
  it('carries alg ES256, typ JWT and the kid, and verifies with an independent verifier', async () => {
    const token = await signAccessToken(claims(), key);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: key.kid });
    const publicKey = await importJWK(key.publicJwk, 'ES256');
    const { payload } = await jwtVerify(token, publicKey, {
      issuer: audience.issuer,
      audience: audience.audience,
      currentDate: NOW,
    });
    expect(payload).toEqual(claims({ jti: decodeJwt(token).jti as string }));
    expect(await reason(token)).toBe('accepted');
  });
});

describe('verification refuses', () => {
  let valid: string;
  beforeAll(async () => {
    valid = await signAccessToken(claims(), key);
  });

  it('alg none', async () => {
    const [, payload] = valid.split('.');
    expect(await reason(`${b64({ alg: 'none', typ: 'JWT', kid: key.kid })}.${payload}.`)).toBe('malformed');
    expect(await reason(`${b64({ alg: 'none', typ: 'JWT', kid: key.kid })}.${payload}.${b64('x')}`)).toBe('algorithm');
  });

  it('HS256 signed with our public key as the HMAC secret', async () => {
    const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${b64(claims())}`;
    for (const secret of [JSON.stringify(key.publicJwk), String(importPublicJwk(key.publicJwk).export({ format: 'pem', type: 'spki' }))]) {
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      expect(await reason(`${input}.${mac}`)).toBe('algorithm');
    }
  });

  it('a kid that is not in our key set', async () => {
    const other = generateSigningKey();
    expect(await reason(await signAccessToken(claims(), other))).toBe('unknown_key');
    expect(await reason(es256({ alg: 'ES256', typ: 'JWT' }, claims(), other.privateKey))).toBe('unknown_key');
  });

  it('a key embedded in the header (jwk) or linked from it (jku, x5u), even under our kid', async () => {
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    for (const extra of [{ jwk }, { jku: 'https://evil.example/jwks' }, { x5u: 'https://evil.example/cert' }, { x5c: ['MII='] }]) {
      expect(await reason(es256({ alg: 'ES256', typ: 'JWT', kid: key.kid, ...extra }, claims(), attacker.privateKey))).toBe('header');
      expect(await reason(es256({ alg: 'ES256', typ: 'JWT', kid: key.kid, ...extra }, claims(), key.privateKey))).toBe('header');
    }
  });

  it('the all-zero ES256 signature (r = s = 0, CVE-2022-21449)', async () => {
    const [header, payload] = valid.split('.');
    expect(await reason(`${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`)).toBe('signature');
    expect(await reason(`${header}.${payload}.${Buffer.alloc(72).toString('base64url')}`)).toBe('signature');
  });

  it('tampered claims under the original signature', async () => {
    const [header, , sig] = valid.split('.');
    for (const change of [{ tenant: 'wzzzzzzzzzzz2' }, { credential_version: 2 }, { exp: claims().exp + 86_400 }, { sub: 'czzzzzzzzzzz2' }]) {
      expect(await reason(`${header}.${b64(claims(change))}.${sig}`)).toBe('signature');
    }
  });

  it('an expired token, with a small leeway', async () => {
    const exp = claims().exp;
    expect(await reason(valid, new Date((exp + 29) * 1000))).toBe('accepted');
    expect(await reason(valid, new Date((exp + 30) * 1000))).toBe('expired');
  });

  it('a token issued in the future', async () => {
    const future = await signAccessToken(claims({ iat: claims().iat + 120, exp: claims().exp + 120 }), key);
    expect(await reason(future)).toBe('not_yet_valid');
  });

  it('another aud, iss or environment', async () => {
    expect(await reason(await signAccessToken(claims({ aud: 'https://preview.bus.example' }), key))).toBe('audience');
    expect(await reason(valid, NOW, audienceFor('https://preview.bus.example'))).toBe('issuer');
    expect(await reason(await signAccessToken(claims({ iss: 'https://evil.example/v1/oauth' }), key))).toBe('issuer');
    expect(await reason(await signAccessToken(claims({ environment: 'production' }), key))).toBe('environment');
    const arrayAud = await signAccessToken({ ...claims(), aud: [audience.audience] as unknown as string }, key);
    expect(await reason(arrayAud)).toBe('audience');
  });

  it('missing or mistyped claims', async () => {
    const { jti: _jti, ...noJti } = claims();
    expect(await reason(es256({ alg: 'ES256', typ: 'JWT', kid: key.kid }, noJti, key.privateKey))).toBe('claims');
    expect(await reason(es256({ alg: 'ES256', typ: 'JWT', kid: key.kid }, claims({ credential_version: 0 }), key.privateKey))).toBe('claims');
    expect(await reason(es256({ alg: 'ES256', typ: 'JWT', kid: key.kid }, { ...claims(), credential_version: '1' }, key.privateKey))).toBe('claims');
  });

  it('anything that is not a compact JWS', async () => {
    for (const token of ['', 'abc', 'a.b', 'a.b.c.d', `${valid} `, `${valid}=`]) expect(await reason(token)).toBe('malformed');
  });
});

describe('authorizeBearer (docs/api.md#authentication rules 1–4)', () => {
  const connection: ConnectionState = {
    id: 'cabcdefghijk2',
    kind: 'producer',
    status: 'active',
    credentialVersion: 1,
    workspaceId: 'wabcdefghijk2',
    appId: 'aabcdefghijk2',
  };
  const refusal = (c: ConnectionState | null, need: BearerRequirement = { kind: 'producer', tenant: 'wabcdefghijk2' }, t = claims()) => {
    try {
      authorizeBearer(t, c, need);
      return 'allowed';
    } catch (err) {
      if (err instanceof TokenRejectedError || err instanceof NotRegisteredError) return `${err.status} ${err.rule} ${err.reason}`;
      if (err instanceof TenantMismatchError) return `${err.status} ${err.rule}`;
      throw err;
    }
  };

  it('allows an active connection of the right kind in its own workspace', () => {
    expect(refusal(connection)).toBe('allowed');
  });
  it('401 for an unknown connection, an old credential version, or an app that left the workspace', () => {
    expect(refusal(null)).toBe('401 producer.unauthenticated unknown_connection');
    expect(refusal({ ...connection, credentialVersion: 2 })).toBe('401 producer.unauthenticated credential_version');
    expect(refusal({ ...connection, workspaceId: 'wzzzzzzzzzzz2' })).toBe('401 producer.unauthenticated workspace_left');
  });
  it('403 producer.not_registered for a revoked or removed connection, or the wrong kind', () => {
    expect(refusal({ ...connection, status: 'revoked' })).toBe('403 producer.not_registered not_active');
    expect(refusal({ ...connection, status: 'removed' })).toBe('403 producer.not_registered not_active');
    expect(refusal(connection, { kind: 'consumer', tenant: 'wabcdefghijk2' })).toBe('403 producer.not_registered wrong_kind');
  });
  it('403 tenant.mismatch for another workspace in the path', () => {
    expect(refusal(connection, { kind: 'producer', tenant: 'wzzzzzzzzzzz2' })).toBe('403 tenant.mismatch');
  });
});
