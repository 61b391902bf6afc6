import type { KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import { CLIENT_ID_PATTERN } from './ids';
import type { AccessTokenClaims, TokenAudience } from './claims';
import { TokenRejectedError } from './refusals';

export interface VerifyOptions {
  /** Our own published keys by kid: the only keys a token can be verified with. */
  keys: ReadonlyMap<string, KeyObject>;
  audience: TokenAudience;
  now: Date;
  /** Clock skew allowed on exp and iat; default 30 s. */
  leewaySeconds?: number;
}

/** Header parameters that name or carry a key. We never take a key from the token itself. */
export const FORBIDDEN_HEADER = ['jku', 'jwk', 'x5u', 'x5c', 'x5t', 'x5t#S256', 'crit', 'b64'];
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const JWT_TYPES = new Set(['JWT', 'at+jwt', 'application/jwt']);

/**
 * Verifies a bus access token: ES256 only, a kid from our key set only, exact iss, aud and
 * environment, exp and iat with a small leeway, and every claim of docs/api.md#access-token with its type. Resolves
 * with the claims or throws TokenRejectedError with the reason. Checks of the connection behind the
 * token (credential version, status, kind, tenancy) are `authorizeBearer`'s.
 */
export async function verifyAccessToken(token: string, opts: VerifyOptions): Promise<AccessTokenClaims> {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) throw new TokenRejectedError('malformed');
  const header = decodeJsonSegment(parts[0] as string);
  if (header.alg !== 'ES256') throw new TokenRejectedError('algorithm');
  if (FORBIDDEN_HEADER.some((name) => name in header)) throw new TokenRejectedError('header');
  if (header.typ !== undefined && !(typeof header.typ === 'string' && JWT_TYPES.has(header.typ))) throw new TokenRejectedError('header');
  const key = typeof header.kid === 'string' ? opts.keys.get(header.kid) : undefined;
  if (!key) throw new TokenRejectedError('unknown_key');
  // An ES256 signature is r || s, 32 bytes each (RFC 7518 §3.4).
  if (Buffer.from(parts[2] as string, 'base64url').length !== 64) throw new TokenRejectedError('signature');
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(token, key, { algorithms: ['ES256'] }));
  } catch {
    throw new TokenRejectedError('signature');
  }
  const claims = parseClaims(Buffer.from(payload).toString('utf8'));

  const now = Math.floor(opts.now.getTime() / 1000);
  const leeway = opts.leewaySeconds ?? 30;
  if (claims.iss !== opts.audience.issuer) throw new TokenRejectedError('issuer');
  if (claims.aud !== opts.audience.audience) throw new TokenRejectedError('audience');
  if (claims.environment !== opts.audience.environment) throw new TokenRejectedError('environment');
  if (claims.exp <= now - leeway) throw new TokenRejectedError('expired');
  if (claims.iat > now + leeway || claims.exp <= claims.iat) throw new TokenRejectedError('not_yet_valid');
  return claims;
}

/** A JWT segment's JSON object; anything else is a malformed token. */
export function decodeJsonSegment(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw new TokenRejectedError('malformed');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TokenRejectedError('malformed');
  return value as Record<string, unknown>;
}

const ID = /^[a-z][a-z2-7]{12}$/;

function parseClaims(json: string): AccessTokenClaims {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw new TokenRejectedError('malformed');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TokenRejectedError('malformed');
  const str = (name: string, pattern?: RegExp): string => {
    const v = raw[name];
    if (typeof v !== 'string' || v.length === 0 || (pattern && !pattern.test(v))) throw new TokenRejectedError('claims');
    return v;
  };
  const int = (name: string, min: number): number => {
    const v = raw[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new TokenRejectedError('claims');
    return v;
  };
  // aud may legally be an array in JWT; ours is one string and must equal the deployment's exactly.
  if (typeof raw.aud !== 'string') throw new TokenRejectedError('audience');
  return {
    iss: str('iss'),
    aud: raw.aud,
    sub: str('sub', CLIENT_ID_PATTERN),
    tenant: str('tenant', ID),
    org: str('org', ID),
    app: str('app', ID),
    environment: str('environment'),
    credential_version: int('credential_version', 1),
    iat: int('iat', 0),
    exp: int('exp', 0),
    jti: str('jti'),
  };
}
