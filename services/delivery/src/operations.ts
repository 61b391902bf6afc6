import type { QueueOperations } from '@bus/contracts';
import type { Knex } from '@bus/db';
import type { Kafka } from '@bus/kafka';
import type { Logger, Registry } from '@bus/observability';
import { KnexDeliveryStore } from './delivery-store';
import { createRedriveMetrics, redriveQuarantined } from './redrive';
import { replayToConsumer } from './replay';

/** Delivery's side of the contract the admin API uses (libs/contracts). Built once per process: it registers the redrive counter on `metrics`. */
export function queueOperations(deps: { db: Knex; kafka: Kafka; logger: Logger; metrics: Registry }): QueueOperations {
  const store = KnexDeliveryStore.create(deps.db);
  const redriveDeps = { store, logger: deps.logger, metrics: createRedriveMetrics(deps.metrics) };
  return {
    replay: (req) => replayToConsumer({ kafka: deps.kafka, store, logger: deps.logger }, req),
    stats: async (consumerId) => (await store.queueStats(consumerId))[0],
    redrive: (ids) => redriveQuarantined(redriveDeps, ids),
  };
}
