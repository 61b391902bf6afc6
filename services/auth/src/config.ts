import { duration, type VarReader } from '@bus/config';
import { busBaseUrlConfig } from '@bus/identity';

/** A base64 value of exactly `bytes` bytes. Never echoed: it is a secret. */
function base64Key(bytes: number): VarReader<Buffer> {
  const describe = `base64 of ${bytes} random bytes (e.g. \`openssl rand -base64 ${bytes}\`)`;
  return {
    describe,
    read: (raw) => {
      if (raw === undefined) throw new Error(`is required (${describe})`);
      const value = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
      if (value.length !== bytes) throw new Error(`must be ${describe}`);
      return value;
    },
  };
}

/** The token service's own variables (on top of Postgres and Redis). */
export const authConfig = {
  ...busBaseUrlConfig,
  /** AES-256-GCM key sealing the signing keys' private halves at rest. */
  SIGNING_KEY_ENCRYPTION_KEY: base64Key(32),
  /** How long one signing key signs before the next takes over. */
  SIGNING_KEY_ROTATION_INTERVAL: duration({ default: 30 * 86_400_000, min: 2 * 3_600_000 }),
} as const;
