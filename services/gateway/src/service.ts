import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';
import { discoveryRouter } from './discovery';
import type { ConfigOf } from '@bus/config';
import type { Knex } from '@bus/db';
import type { Logger } from '@bus/observability';
import { MESSAGES_TOPIC, type Producer } from '@bus/kafka';
import { createSomValidator } from '@bus/som';
import type { gatewayConfig } from './config';
import type { Registry } from 'prom-client';
import type { Identity } from '@bus/identity';
import { createGroupCommitter } from './group-commit';
import { currentTraceparent, kafkaCommitter } from './kafka-commit';
import type { PublishDeps } from './publish';
import { KnexPublishStore } from './publish-store';
import { publishRoutes, type PublishRoutesDeps } from './publish-routes';

export interface GatewayServiceDeps extends PublishRoutesDeps {
  /** Postgres (idempotency, story state), Redis (quotas) and Kafka (bus.messages.v1) readiness. */
  readiness: ReadinessCheck[];
}

/** Publish and validate routes (spec §2.6–2.7, §4.2, §7.2) and the bus health route. */
export function createGatewayService(deps: GatewayServiceDeps): Service {
  const tenant = '/v1/tenants/:t';
  return {
    name: 'gateway',
    routers: [
      discoveryRouter(),
      publishRoutes(deps),
      notImplementedRouter([
        ['post', `${tenant}/iam/messages`],
        ['post', `${tenant}/iam/validate`],
        ['post', `${tenant}/principals/verify`],
        ['post', '/v1/jwt/messages'],
        ['post', '/v1/messages'],
      ]),
    ],
    readiness: deps.readiness,
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
