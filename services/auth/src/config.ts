import { duration } from '@bus/config';
import { busBaseUrlConfig, encryptionKeyConfig } from '@bus/identity';

/** The token service's own variables (on top of Postgres and Redis). */
export const authConfig = {
  ...busBaseUrlConfig,
  /** AES-256-GCM key sealing the signing keys' private halves at rest. */
  ...encryptionKeyConfig,
  /** How long one signing key signs before the next takes over. */
  SIGNING_KEY_ROTATION_INTERVAL: duration({ default: 30 * 86_400_000, min: 2 * 3_600_000 }),
} as const;
