import type { Knex } from '@bus/db';
import type { Kafka } from '@bus/kafka';
import type { Logger } from '@bus/observability';
import { KnexDeliveryStore, type QueueStats } from './delivery-store';
import { replayToConsumer, type ReplayRequest, type ReplayResult } from './replay';

/** What the portal's admin API does to consumer queues: replay from the archive, and read their stats. */
export interface QueueOperations {
  replay(req: ReplayRequest): Promise<ReplayResult>;
  /** Undefined when the consumer has nothing un-acked. */
  stats(consumerId: string): Promise<QueueStats | undefined>;
}

export function queueOperations(deps: { db: Knex; kafka: Kafka; logger: Logger }): QueueOperations {
  const store = KnexDeliveryStore.create(deps.db);
  return {
    replay: (req) => replayToConsumer({ kafka: deps.kafka, store, logger: deps.logger }, req),
    stats: async (consumerId) => (await store.queueStats(consumerId))[0],
  };
}
