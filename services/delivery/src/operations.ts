import type { Knex } from '@bus/db';
import type { Kafka } from '@bus/kafka';
import type { Logger, Registry } from '@bus/observability';
import { KnexDeliveryStore, type QueueStats } from './delivery-store';
import { createRedriveMetrics, redriveQuarantined, type RedriveResult } from './redrive';
import { replayToConsumer, type ReplayRequest, type ReplayResult } from './replay';

/**
 * What the portal's admin API does to consumer queues: replay from the archive, read their stats, and
 * redrive quarantined records.
 */
export interface QueueOperations {
  replay(req: ReplayRequest): Promise<ReplayResult>;
  /** Undefined when the consumer has nothing un-acked. */
  stats(consumerId: string): Promise<QueueStats | undefined>;
  /** Each quarantined record's redrive, in the order of `ids` (redrive.ts). */
  redrive(ids: readonly string[]): Promise<RedriveResult[]>;
}

/** Built once per process: it registers the redrive counter on `metrics`. */
export function queueOperations(deps: { db: Knex; kafka: Kafka; logger: Logger; metrics: Registry }): QueueOperations {
  const store = KnexDeliveryStore.create(deps.db);
  const redriveDeps = { store, logger: deps.logger, metrics: createRedriveMetrics(deps.metrics) };
  return {
    replay: (req) => replayToConsumer({ kafka: deps.kafka, store, logger: deps.logger }, req),
    stats: async (consumerId) => (await store.queueStats(consumerId))[0],
    redrive: (ids) => redriveQuarantined(redriveDeps, ids),
  };
}
