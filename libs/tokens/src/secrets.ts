import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * How a client secret is kept: `sha256:` + the base64url SHA-256 of the secret.
 *
 * Why not bcrypt/scrypt/argon2: those slow hashes protect low-entropy, human-chosen passwords from
 * dictionary attacks on a stolen table. Our secrets are 256 random bits we generate ourselves, so a
 * stolen hash cannot be reversed by guessing whatever the hash costs (2^255 tries on average), and a
 * fast hash adds nothing to an attacker's work while a slow one would make every token request burn
 * ~100 ms of CPU: the token URL would become the easiest way to exhaust the service.
 */
const SCHEME = 'sha256:';

export function hashSecret(secret: string): string {
  return SCHEME + digest(secret).toString('base64url');
}

/** Constant-time comparison of a presented secret with a stored hash (any length, any input). */
export function secretMatches(secret: string, storedHash: string): boolean {
  if (!storedHash.startsWith(SCHEME)) return false;
  const expected = Buffer.from(storedHash.slice(SCHEME.length), 'base64url');
  const actual = digest(secret);
  // A malformed stored hash is our own data, not the caller's: refusing it early leaks nothing.
  if (expected.length !== actual.length) return false;
  return timingSafeEqual(expected, actual);
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}
