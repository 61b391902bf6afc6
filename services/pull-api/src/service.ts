import type { RequestHandler } from 'express';
import type { ReadinessCheck, Service } from '@bus/http';
import { readConnectionDates, readSkillRegistrations, type Knex } from '@bus/db';
import type { BearerAuthenticator, ConnectionUse, Identity } from '@bus/identity';
import type { LimitMetrics, Redis } from '@bus/limits';
import { pullApiDepsOf } from './config';
import type { ActivityRecorder, Logger, Registry } from '@bus/observability';
import { createPgQueueNotifier } from './notifier';
import { createPullMetrics, type PullDeps } from './pull';
import { KnexDeliveryStore, KnexQueueStore, pacedQueueCounts, purgeQueue, queueCall } from '@bus/queue';
import { createReceiptHandles } from './receipt';
import { pullRoutes } from './pull-routes';
import { sqsErrorAnswer, sqsRoutes, type SqsRoutesDeps } from './sqs';

export interface PullApiServiceDeps {
  /** Postgres (the consumer queues) and Redis (the connection quotas) readiness. */
  readiness: ReadinessCheck[];
  db: Knex;
  /** Postgres URL for the dedicated LISTEN connection of the long poll. */
  databaseUrl: string;
  /** The credentials behind consumer tokens. */
  authenticator: BearerAuthenticator;
  /** The per-connection quota of docs/api.md#limits (libs/identity connectionQuota). */
  connectionQuota: RequestHandler;
  /** A receive's use of its connection (libs/identity connectionUse). */
  connectionUse: ConnectionUse;
  /** HMAC key of the receipt handles (RECEIPT_HANDLE_KEY); all pull-api processes share it. */
  receiptHandleKey: Buffer;
  logger: Logger;
  /** The process's registry, served at /metrics. */
  metrics: Registry;
  /** The process's activity recorder (libs/composition): the pull API counts acks, the process starts and stops it. */
  activity: Pick<ActivityRecorder, 'acked'>;
  /** The SQS door's principals, replay store, shared signed-request limit and scope (pullApiDepsOf). */
  sqs: Omit<SqsRoutesDeps, 'pull' | 'stats' | 'queueDates' | 'purge'>;
}

/** Consumer routes: state, receive (long poll), ack, nack, skills (docs/api.md#pull-records, #routes; docs/delivery.md), and their SQS door. */
export function createPullApiService(deps: PullApiServiceDeps): Service {
  const notifier = createPgQueueNotifier({ url: deps.databaseUrl, logger: deps.logger });
  const store = KnexQueueStore.create(deps.db);
  const deliveries = KnexDeliveryStore.create(deps.db);
  // One queue, two doors: the consumer routes and the SQS door share these operations and handles.
  const pull: PullDeps = {
    store,
    tools: store,
    notifier,
    handles: createReceiptHandles(deps.receiptHandleKey),
    logger: deps.logger,
    metrics: createPullMetrics(deps.metrics),
    activity: deps.activity,
    connectionUse: deps.connectionUse,
  };
  const stats = pacedQueueCounts(async (consumerId) => (await queueCall(() => deliveries.queueStats(consumerId)))[0]);
  const queueDates = (consumerId: string) => queueCall(() => readConnectionDates(deps.db, consumerId));
  return {
    name: 'pull-api',
    routers: [
      pullRoutes({
        authenticator: deps.authenticator,
        connectionQuota: deps.connectionQuota,
        pull,
        registrations: (consumerId) => queueCall(() => readSkillRegistrations(deps.db, consumerId)),
        stats,
        connectionDates: queueDates,
      }),
      sqsRoutes({
        ...deps.sqs,
        pull,
        stats,
        queueDates,
        purge: (consumerId) => queueCall(() => purgeQueue(deps.db, consumerId)),
      }),
    ],
    errorPage: sqsErrorAnswer,
    // A lost LISTEN connection is not a readiness matter: the notifier reconnects and wakes every
    // waiter meanwhile, and receives still read Postgres.
    readiness: deps.readiness,
    start: () => notifier.start(),
    drain: () => notifier.drain(),
    stop: () => notifier.stop(),
  };
}

/**
 * The pull API on a process's shared clients, as its own main and the all-in-one run it: `ready` are
 * the Postgres and Redis checks, the identity's control topic is added to them.
 */
export function pullApiServiceOf(
  clients: {
    db: Knex;
    redis: Redis;
    identity: Identity;
    logger: Logger;
    metrics: Registry;
    activity: PullApiServiceDeps['activity'];
    limitMetrics: LimitMetrics;
    connectionQuota: RequestHandler;
    ready: { postgres: ReadinessCheck; redis: ReadinessCheck };
  },
  config: Parameters<typeof pullApiDepsOf>[1],
): Service {
  const { db, redis, identity, logger, metrics, activity, limitMetrics, connectionQuota, ready } = clients;
  return createPullApiService({
    ...pullApiDepsOf(
      {
        db,
        redis,
        connections: identity.connections,
        logger,
        metrics,
        activity,
        limitMetrics,
        authenticator: identity,
        connectionQuota,
        connectionUse: identity.connectionUse,
      },
      config,
    ),
    readiness: [ready.postgres, ready.redis, identity.controlReadiness],
  });
}
