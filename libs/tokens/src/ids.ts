import { randomBytes } from 'node:crypto';

/** docs/api.md#connections-and-credentials: the letter c followed by 12 characters of lowercase a-z and digits 2-7. */
export const CLIENT_ID_PATTERN = /^c[a-z2-7]{12}$/;
/** docs/api.md#connections-and-credentials: secrets start with sbs_; ours carry 32 random bytes (256 bits) as base64url, 43 characters. */
export const CLIENT_SECRET_PATTERN = /^sbs_[A-Za-z0-9_-]{43,}$/;
export const SECRET_PREFIX = 'sbs_';
export const SECRET_BYTES = 32;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A random id: `prefix` + 12 characters of [a-z2-7] (60 bits). The same shape serves organisations
 * (o), workspaces (w), apps (a), connections (c, the client id), skill registrations (r), replay
 * jobs (p), identity providers (i) and their bindings (b), as the tables check.
 */
export function newId(prefix: 'c' | 'o' | 'w' | 'a' | 'r' | 'p' | 'i' | 'b'): string {
  const bytes = randomBytes(12);
  let out = prefix;
  // 32 divides 256, so a byte modulo 32 is uniform.
  for (const b of bytes) out += BASE32[b % 32];
  return out;
}

export function newClientId(): string {
  return newId('c');
}

export function isClientId(value: string): boolean {
  return CLIENT_ID_PATTERN.test(value);
}

/** A new client secret: `sbs_` + 256 random bits, base64url. Shown once; only its hash is kept. */
export function newClientSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}
