import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ACCESS_TOKEN_TTL_SECONDS } from './claims';
import { seal, unseal } from './sealing';

/** A public signing key as published in the key set (docs/api.md#signing-key-set). */
export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface GeneratedSigningKey {
  kid: string;
  publicJwk: PublicJwk;
  privateKey: KeyObject;
}

export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
}

/** A new P-256 key pair; its kid is the RFC 7638 thumbprint of the public key. */
export function generateSigningKey(): GeneratedSigningKey {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...describePublicKey(publicKey), privateKey };
}

function describePublicKey(publicKey: KeyObject): { kid: string; publicJwk: PublicJwk } {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new SigningKeyError('not a P-256 public key');
  }
  const kid = thumbprint({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return { kid, publicJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' } };
}

/** RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace, base64url. */
export function thumbprint(jwk: { crv: string; kty: string; x: string; y: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical, 'utf8').digest('base64url');
}

/** The public key of a published JWK, refusing anything but a P-256 EC key whose kid is its thumbprint. */
export function importPublicJwk(jwk: PublicJwk): KeyObject {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || jwk.kid !== thumbprint(jwk)) throw new SigningKeyError('not one of our signing keys');
  return createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
}

/**
 * Private keys at rest: sealed under the configured 32-byte key (sealing.ts), the kid as additional
 * authenticated data so a ciphertext cannot be moved to another key's row.
 */
export function encryptPrivateKey(privateKey: KeyObject, kid: string, encryptionKey: Buffer): string {
  try {
    return seal(privateKey.export({ format: 'der', type: 'pkcs8' }), kid, encryptionKey);
  } catch (err) {
    throw new SigningKeyError(err instanceof Error ? err.message : String(err));
  }
}

export function decryptPrivateKey(sealed: string, kid: string, encryptionKey: Buffer): KeyObject {
  let der: Buffer;
  try {
    der = unseal(sealed, kid, encryptionKey);
  } catch {
    throw new SigningKeyError(`signing key ${kid} cannot be decrypted with the configured SIGNING_KEY_ENCRYPTION_KEY`);
  }
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

/** Where one signing key is in its life; times are stored with the key. */
export interface SigningKeyLifecycle {
  kid: string;
  createdAt: Date;
  /** Signs from here on; published since createdAt, which is at least PRE_PUBLISH_MS earlier (except the very first key). */
  activatesAt: Date;
  /** Stops signing here (when its successor activates); null while it has no successor. */
  retiresAt: Date | null;
  /** Leaves the key set here: once every token it signed has expired. */
  unpublishAt: Date | null;
}

/** Twice the key set's cache time (docs/api.md#limits: 5 minutes): every verifier has the next key before it signs. */
export const PRE_PUBLISH_MS = 10 * 60_000;
/** A retired key stays published while its tokens live (1 h), plus the verifiers' leeway and cache. */
export const POST_RETIRE_MS = ACCESS_TOKEN_TTL_SECONDS * 1000 + 10 * 60_000;

/** The key that signs at `now`: the latest activated one that has not retired. */
export function signingKeyAt<K extends SigningKeyLifecycle>(keys: readonly K[], now: Date): K | undefined {
  const t = now.getTime();
  return keys
    .filter((k) => k.activatesAt.getTime() <= t && (k.retiresAt === null || k.retiresAt.getTime() > t))
    .sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime())[0];
}

/** The keys of the key set at `now`: created, and not yet past their unpublish time. */
export function publishedKeysAt<K extends SigningKeyLifecycle>(keys: readonly K[], now: Date): K[] {
  const t = now.getTime();
  return keys
    .filter((k) => k.createdAt.getTime() <= t && (k.unpublishAt === null || k.unpublishAt.getTime() > t))
    .sort((a, b) => a.activatesAt.getTime() - b.activatesAt.getTime());
}

export interface RotationPlan {
  /** Create a key that signs from `activatesAt`. */
  create?: { activatesAt: Date };
  /** Retire the current key when its successor activates. */
  retire?: { kid: string; retiresAt: Date; unpublishAt: Date };
  /** Keys past their unpublish time, to delete. */
  remove: string[];
}

/**
 * What to change so a key always signs, each key signs for about `intervalMs`, the next key is
 * published PRE_PUBLISH_MS before it signs, and the old one stays published while its tokens live.
 */
export function planRotation(keys: readonly SigningKeyLifecycle[], now: Date, intervalMs: number): RotationPlan {
  const t = now.getTime();
  const remove = keys.filter((k) => k.unpublishAt !== null && k.unpublishAt.getTime() <= t).map((k) => k.kid);
  const current = signingKeyAt(keys, now);
  const pending = keys.some((k) => k.activatesAt.getTime() > t);
  if (!current) {
    // Nothing signs (a new environment): a key that signs at once; no token can exist before it.
    return { create: { activatesAt: now }, remove };
  }
  if (pending || current.retiresAt !== null) return { remove };
  const due = current.activatesAt.getTime() + intervalMs;
  if (t < due - PRE_PUBLISH_MS) return { remove };
  const activatesAt = new Date(Math.max(due, t + PRE_PUBLISH_MS));
  return {
    create: { activatesAt },
    retire: { kid: current.kid, retiresAt: activatesAt, unpublishAt: new Date(activatesAt.getTime() + POST_RETIRE_MS) },
    remove,
  };
}
