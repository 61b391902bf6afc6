import type { ReadinessCheck, Service } from '@bus/http';
import { discoveryRouter } from './discovery';
import type { ConfigOf } from '@bus/config';
import { writeRefusals, type Knex } from '@bus/db';
import type { ActivityRecorder, Logger } from '@bus/observability';
import { MESSAGES_TOPIC, type Producer } from '@bus/kafka';
import { createSomValidator } from '@bus/som';
import type { gatewayConfig } from './config';
import type { Registry } from 'prom-client';
import { PrincipalStore, signedRequestLimit, type Identity, type sigv4Config } from '@bus/identity';
import { type LimitMetrics, type Redis } from '@bus/limits';
import { createGroupCommitter } from './group-commit';
import { currentTraceparent, kafkaCommitter } from './kafka-commit';
import type { PublishDeps } from './publish';
import { KnexPublishStore } from './publish-store';
import { publishRoutes, type PublishRoutesDeps } from './publish-routes';
import { createRefusalRecorder } from './refusal-recorder';
import { openRunsOf } from './open-runs';
import { signedRoutes, type SignedRoutes } from './signed-routes';
import { runRoutes } from './run-routes';
import { testerRoutes } from './tester-routes';
import { managedAppAuth } from './managed-auth';
import type { ManagedApp } from './managed-apps';
import type { RequestHandler } from 'express';

interface GatewayServiceDeps extends Omit<PublishRoutesDeps, 'refusals' | 'signedSteps' | 'managedSignedSteps'> {
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
 * Publish and validate routes (docs/api.md#resources, #publish-and-validate, #errors), the bus health route, and the producer's
 * tester routes (message trace, recent refusals, story view; docs/testing-tools.md).
 */
function createGatewayService(deps: GatewayServiceDeps): Service {
  const openRuns = openRunsOf(deps.db);
  const refusals = createRefusalRecorder({
    write: (records, counts, validates) => writeRefusals(deps.db, records, counts, validates),
    openRunAt: (workspaceId, at) => openRuns.openAt(workspaceId, at),
    logger: deps.logger,
    metrics: deps.metrics,
  });
  return {
    name: 'gateway',
    routers: [
      discoveryRouter(),
      publishRoutes({ ...deps, refusals, signedSteps: deps.signed.publishSteps, managedSignedSteps: deps.signed.managedSteps }),
      deps.signed.verifyRouter,
      testerRoutes({ authenticator: deps.authenticator, connectionQuota: deps.connectionQuota, db: deps.db }),
      runRoutes({ authenticator: deps.authenticator, connectionQuota: deps.connectionQuota, db: deps.db, openRuns }),
    ],
    readiness: deps.readiness,
    start: async () => refusals.start(),
    // After the server drained: the refusals of the last requests are written before the process ends.
    stop: () => refusals.stop(),
  };
}

/**
 * The gateway on a process's shared clients, as its own main and the all-in-one run it: `ready` are
 * the Postgres (idempotency, story state), Redis (quotas) and Kafka (bus.messages.v1) checks, the
 * identity's control topic is added to them.
 */
export function gatewayServiceOf(
  clients: {
    db: Knex;
    redis: Redis;
    /** Gives up within PUBLISH_COMMIT_TIMEOUT (the composition's boundedProducer). */
    producer: Producer;
    identity: Identity;
    logger: Logger;
    metrics: Registry;
    /** The process's activity recorder (libs/composition): the gateway counts publishes and refusals, the process starts and stops it. */
    activity: Pick<ActivityRecorder, 'published' | 'refused'>;
    limitMetrics: LimitMetrics;
    connectionQuota: RequestHandler;
    managedApps: readonly ManagedApp[];
    ready: { postgres: ReadinessCheck; redis: ReadinessCheck; kafka: ReadinessCheck };
  },
  config: ConfigOf<typeof gatewayConfig>,
): Service {
  const { db, redis, producer, identity, logger, metrics, activity, limitMetrics, managedApps, ready } = clients;
  return createGatewayService({
    readiness: [ready.postgres, ready.redis, ready.kafka, identity.controlReadiness],
    authenticator: identity,
    db,
    logger,
    connectionQuota: clients.connectionQuota,
    metrics,
    activity,
    publish: publishDepsOf({ db, producer, logger, metrics, identity }, config),
    managedAppAuth: managedAppAuthOf(managedApps, identity),
    connectionUse: identity.connectionUse,
    signed: signedRoutesOf({ db, redis, identity, limitMetrics, managedApps }, config),
  });
}

/**
 * POST /v1/jwt/messages's authentication: the managed apps (managedAppsOf, read first thing at
 * start-up so a bad entry stops the process before it connects anywhere) with the identity's verifier
 * and connection cache.
 */
function managedAppAuthOf(apps: readonly ManagedApp[], identity: Pick<Identity, 'externalTokens' | 'connections'>): RequestHandler {
  return managedAppAuth({ apps, verifier: identity.externalTokens, connections: identity.connections });
}

/** The publish pipeline on the real stores: Postgres for the records, Kafka (acks=all) for the messages. */
function publishDepsOf(
  clients: { db: Knex; producer: Producer; logger: Logger; metrics: Registry; identity: Pick<Identity, 'cache'> },
  config: ConfigOf<typeof gatewayConfig>,
): PublishDeps {
  const commitTimeoutMs = config.PUBLISH_COMMIT_TIMEOUT;
  const store = KnexPublishStore.create(clients.db);
  const permissions = clients.identity.cache(
    (appId) => store.permissions(appId),
    (event) => (event.type === 'app.changed' ? [event.app_id] : []),
  );
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

/**
 * The AWS-signed routes on the real stores: principals in Postgres, the shared limit in Redis; the managed apps' keys from MANAGED_APPS_FILE (managedAppsOf).
 */
function signedRoutesOf(
  clients: { db: Knex; redis: Redis; identity: Pick<Identity, 'connections'>; limitMetrics?: LimitMetrics; managedApps: readonly ManagedApp[] },
  config: ConfigOf<typeof sigv4Config>,
): SignedRoutes {
  return signedRoutes({
    principals: PrincipalStore.create({ db: clients.db, encryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY }),
    connections: clients.identity.connections,
    limit: signedRequestLimit(clients.redis, config, clients.limitMetrics),
    region: config.AWS_SIGV4_REGION,
    maxSkewMs: config.AWS_SIGV4_MAX_SKEW,
    managedApps: clients.managedApps,
  });
}
