import { base64Key, duration } from '@bus/config';
import { busBaseUrlConfig } from '@bus/identity';

/** The token service's own variables (on top of Postgres and Redis). */
export const authConfig = {
  ...busBaseUrlConfig,
  /** AES-256-GCM key sealing the signing keys' private halves at rest. */
  SIGNING_KEY_ENCRYPTION_KEY: base64Key(32),
  /** How long one signing key signs before the next takes over. */
  SIGNING_KEY_ROTATION_INTERVAL: duration({ default: 30 * 86_400_000, min: 2 * 3_600_000 }),
} as const;
