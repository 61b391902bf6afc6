import { base64Key, type ConfigOf } from '@bus/config';
import type { Knex } from '@bus/db';
import { PrincipalStore, signedRequestLimit, sigv4Config, type ConnectionCache } from '@bus/identity';
import type { LimitMetrics, Redis } from '@bus/limits';
import type { Logger, Registry } from '@bus/observability';
import type { PullApiServiceDeps } from './service';
import { redisPurgeMarks } from './sqs-purge';

/** The pull API's own variables (on top of Postgres and the identity settings). */
export const pullApiConfig = {
  /** HMAC-SHA256 key of receipt handles; every pull-api process of an environment shares it. */
  RECEIPT_HANDLE_KEY: base64Key(32, { atLeast: true }),
  /** The SQS door: region, clock skew, the signed requests' shared limit, and the key that opens principals' secrets. */
  ...sigv4Config,
} as const;

/**
 * The pull API's dependencies from its configuration and the process's clients: one mapping for every
 * composition root (the pull API's main and the all-in-one), which add readiness.
 */
export function pullApiDepsOf(
  clients: Pick<PullApiServiceDeps, 'authenticator' | 'connectionQuota' | 'connectionUse' | 'activity'> & {
    db: Knex;
    redis: Redis;
    connections: Pick<ConnectionCache, 'get'>;
    logger: Logger;
    metrics: Registry;
    limitMetrics?: LimitMetrics;
  },
  config: { DATABASE_URL: string; RECEIPT_HANDLE_KEY: Buffer; BUS_BASE_URL: string } & ConfigOf<typeof sigv4Config>,
): Omit<PullApiServiceDeps, 'readiness'> {
  const { redis, connections, limitMetrics, ...shared } = clients;
  return {
    ...shared,
    databaseUrl: config.DATABASE_URL,
    receiptHandleKey: config.RECEIPT_HANDLE_KEY,
    sqs: {
      principals: PrincipalStore.create({ db: clients.db, encryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY }),
      connections,
      limit: signedRequestLimit(redis, config, limitMetrics),
      purgeMarks: redisPurgeMarks(redis),
      region: config.AWS_SIGV4_REGION,
      maxSkewMs: config.AWS_SIGV4_MAX_SKEW,
      baseUrl: config.BUS_BASE_URL,
    },
  };
}
