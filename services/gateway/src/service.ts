import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';
import { discoveryRouter } from './discovery';
import type { ConfigOf } from '@bus/config';
import { writeRefusals, type Knex } from '@bus/db';
import type { Logger } from '@bus/observability';
import { MESSAGES_TOPIC, type Producer } from '@bus/kafka';
import { createSomValidator } from '@bus/som';
import type { gatewayConfig } from './config';
import type { Registry } from 'prom-client';
import { PrincipalStore, redisReplayStore, type Identity, type sigv4Config } from '@bus/identity';
import { createLimiter, type LimitMetrics, type Redis } from '@bus/limits';
import { createGroupCommitter } from './group-commit';
import { currentTraceparent, kafkaCommitter } from './kafka-commit';
import type { PublishDeps } from './publish';
import { KnexPublishStore } from './publish-store';
import { publishRoutes, type PublishRoutesDeps } from './publish-routes';
import { createRefusalRecorder } from './refusal-recorder';
import { signedRoutes, type SignedRoutes } from './signed-routes';
import { testerRoutes } from './tester-routes';

export interface GatewayServiceDeps extends Omit<PublishRoutesDeps, 'refusals' | 'signedSteps'> {
  /** The AWS-signed routes (signedRoutesOf). */
  signed: SignedRoutes;
  /** Postgres (idempotency, story state), Redis (quotas) and Kafka (bus.messages.v1) readiness. */
  readiness: ReadinessCheck[];
  /** The tester routes read it and the refusal recorder writes it (the publish path keeps its own store). */
  db: Knex;
  /** The refusal recorder reports a batch it could not write. */
  logger: Logger;
}

/**
 * Publish and validate routes (spec §2.6–2.7, §4.2, §7.2), the bus health route, and the producer's
 * tester routes (message trace, recent refusals, story view; docs/testing-tools.md).
 */
export function createGatewayService(deps: GatewayServiceDeps): Service {
  const refusals = createRefusalRecorder({ write: (records, counts) => writeRefusals(deps.db, records, counts), logger: deps.logger, metrics: deps.metrics });
  return {
    name: 'gateway',
    routers: [
      discoveryRouter(),
      publishRoutes({ ...deps, refusals, signedSteps: deps.signed.publishSteps }),
      deps.signed.verifyRouter,
      testerRoutes({ authenticator: deps.authenticator, connectionQuota: deps.connectionQuota, db: deps.db }),
      notImplementedRouter([
        ['post', '/v1/jwt/messages'],
        ['post', '/v1/messages'],
      ]),
    ],
    readiness: deps.readiness,
    start: async () => refusals.start(),
    // After the server drained: the refusals of the last requests are written before the process ends.
    stop: () => refusals.stop(),
  };
}

/** The publish pipeline on the real stores: Postgres for the records, Kafka (acks=all) for the messages. */
export function publishDepsOf(
  clients: { db: Knex; producer: Producer; logger: Logger; metrics: Registry; identity: Pick<Identity, 'cache'> },
  config: ConfigOf<typeof gatewayConfig>,
): PublishDeps {
  const commitTimeoutMs = config.PUBLISH_COMMIT_TIMEOUT;
  const store = KnexPublishStore.create(clients.db);
  const permissions = clients.identity.cache((appId) => store.permissions(appId), (event) => (event.type === 'app.changed' ? [event.app_id] : []));
  return {
    store,
    validator: createSomValidator(),
    permissions: (appId) => permissions.get(appId),
    committer: createGroupCommitter({
      store,
      // The brokers may take as long as the whole commit to acknowledge; the commit's own deadline cuts it.
      commitToKafka: kafkaCommitter(clients.producer, MESSAGES_TOPIC, { ackTimeoutMs: commitTimeoutMs }),
      commitTimeoutMs,
      logger: clients.logger,
      metrics: clients.metrics,
    }),
    traceparent: currentTraceparent,
  };
}

/** The AWS-signed routes on the real stores: principals in Postgres, replays and the shared limit in Redis. */
export function signedRoutesOf(
  clients: { db: Knex; redis: Redis; identity: Pick<Identity, 'connections'>; limitMetrics?: LimitMetrics },
  config: ConfigOf<typeof sigv4Config>,
): SignedRoutes {
  const extra = config.AWS_SIGV4_LIMIT_BURST - config.AWS_SIGV4_LIMIT_PER_SECOND;
  return signedRoutes({
    principals: PrincipalStore.create({ db: clients.db, encryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY }),
    connections: clients.identity.connections,
    replays: redisReplayStore(clients.redis),
    limiter: createLimiter(
      clients.redis,
      {
        name: 'sigv4',
        label: 'signed_routes',
        rate: { points: config.AWS_SIGV4_LIMIT_PER_SECOND, durationSeconds: 1 },
        // As the whole-API limit: the burst above the rate is spread over 10 s.
        ...(extra > 0 ? { burst: { points: extra, durationSeconds: 10 } } : {}),
      },
      clients.limitMetrics,
    ),
    region: config.AWS_SIGV4_REGION,
    maxSkewMs: config.AWS_SIGV4_MAX_SKEW,
  });
}
