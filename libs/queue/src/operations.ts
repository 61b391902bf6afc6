import type { QueueOperations } from '@bus/contracts';
import type { Knex } from '@bus/db';
import type { Kafka } from '@bus/kafka';
import type { Logger, Registry } from '@bus/observability';
import { browseQueue } from './browse';
import { KnexDeliveryStore } from './delivery-store';
import { KnexQueueStore } from './queue-store';
import { createDeadLetterMetrics, listDeadLetters, resolveDeadLetter } from './dead-letters';
import { createRedriveMetrics, redriveQuarantined } from './redrive';
import { purgeQueue } from './purge';
import { pacedQueueCounts } from './queue-counts';
import { replayToConsumer } from './replay';

/** The queues' side of the contract the admin API uses (libs/contracts), over delivery's store. Built once per process: it registers the redrive and dead-letter counters on `metrics`. */
export function queueOperations(deps: { db: Knex; kafka: Kafka; logger: Logger; metrics: Registry }): QueueOperations {
  const store = KnexDeliveryStore.create(deps.db);
  const queues = KnexQueueStore.create(deps.db);
  const redriveDeps = { store, logger: deps.logger, metrics: createRedriveMetrics(deps.metrics) };
  const deadLetterMetrics = createDeadLetterMetrics(deps.metrics);
  return {
    replay: (req) => replayToConsumer({ kafka: deps.kafka, store, logger: deps.logger }, req),
    stats: pacedQueueCounts(async (consumerId) => (await store.queueStats(consumerId))[0]),
    redrive: (ids) => redriveQuarantined(redriveDeps, ids),
    deadLetters: (consumerId) => listDeadLetters(deps.db, consumerId),
    browse: (consumerId, max, gate) => browseQueue(queues, consumerId, max, gate),
    resolveDeadLetter: async (consumerId, id, resolution) => {
      const resolved = await resolveDeadLetter(deps.db, consumerId, id, resolution);
      if (resolved) deadLetterMetrics.resolved.inc({ resolution });
      return resolved;
    },
    purge: (consumerId) => purgeQueue(deps.db, consumerId),
  };
}
