import { duration, type ConfigOf } from '@bus/config';
import type { Knex } from '@bus/db';
import { busBaseUrlConfig, encryptionKeyConfig } from '@bus/identity';
import type { LimitMetrics, Redis } from '@bus/limits';
import type { Logger, Registry } from '@bus/observability';
import type { AuthServiceDeps } from './service';

/** The token service's own variables (on top of Postgres and Redis). */
export const authConfig = {
  ...busBaseUrlConfig,
  /** AES-256-GCM key sealing the signing keys' private halves at rest. */
  ...encryptionKeyConfig,
  /** How long one signing key signs before the next takes over. */
  SIGNING_KEY_ROTATION_INTERVAL: duration({ default: 30 * 86_400_000, min: 2 * 3_600_000 }),
} as const;

/**
 * The token service's dependencies from its configuration and the process's clients: one mapping for
 * every composition root (the auth main and the all-in-one), which add readiness.
 */
export function authDepsOf(
  clients: { db: Knex; redis: Redis; logger: Logger; metrics: Registry; limitMetrics: LimitMetrics },
  config: ConfigOf<typeof authConfig>,
): Omit<AuthServiceDeps, 'readiness'> {
  return {
    ...clients,
    baseUrl: config.BUS_BASE_URL,
    signingKeyEncryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY,
    rotationIntervalMs: config.SIGNING_KEY_ROTATION_INTERVAL,
  };
}
