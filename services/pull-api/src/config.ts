import { base64Key } from '@bus/config';
import type { Knex } from '@bus/db';
import type { Logger, Registry } from '@bus/observability';
import type { PullApiServiceDeps } from './service';

/** The pull API's own variables (on top of Postgres and the identity settings). */
export const pullApiConfig = {
  /** HMAC-SHA256 key of receipt handles; every pull-api process of an environment shares it. */
  RECEIPT_HANDLE_KEY: base64Key(32, { atLeast: true }),
} as const;

/**
 * The pull API's dependencies from its configuration and the process's clients: one mapping for every
 * composition root (the pull API's main and the all-in-one), which add readiness.
 */
export function pullApiDepsOf(
  clients: Pick<PullApiServiceDeps, 'authenticator' | 'connectionQuota'> & { db: Knex; logger: Logger; metrics: Registry },
  config: { DATABASE_URL: string; RECEIPT_HANDLE_KEY: Buffer },
): Omit<PullApiServiceDeps, 'readiness'> {
  return { ...clients, databaseUrl: config.DATABASE_URL, receiptHandleKey: config.RECEIPT_HANDLE_KEY };
}
