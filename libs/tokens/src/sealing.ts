import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A sealed value that cannot be opened: wrong key, wrong binding, or not ours. */
export class SealingError extends Error {
  override readonly name = 'SealingError';
}

/**
 * Envelope of the bus's secrets at rest (signing keys' private halves, AWS principals' secret access
 * keys): AES-256-GCM under the configured 32-byte key-encryption key (SIGNING_KEY_ENCRYPTION_KEY),
 * with `binding` (the row's id) as additional authenticated data so a ciphertext cannot be moved to
 * another row. `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
export function seal(plaintext: Buffer, binding: string, encryptionKey: Buffer): string {
  checkEncryptionKey(encryptionKey);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
  cipher.setAAD(Buffer.from(binding, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

export function unseal(sealed: string, binding: string, encryptionKey: Buffer): Buffer {
  checkEncryptionKey(encryptionKey);
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !ciphertext) throw new SealingError('unknown sealing format');
  try {
    const decipher = createDecipheriv('aes-256-gcm', encryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(binding, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
  } catch {
    throw new SealingError('the sealed value cannot be opened with the configured SIGNING_KEY_ENCRYPTION_KEY');
  }
}

function checkEncryptionKey(key: Buffer): void {
  if (key.length !== 32) throw new SealingError('the signing-key encryption key must be 32 bytes');
}
