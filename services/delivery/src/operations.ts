import type { Knex } from '@bus/db';
import type { Kafka } from '@bus/kafka';
import type { Logger, Registry } from '@bus/observability';
import { KnexDeliveryStore, type QueueStats } from './delivery-store';
import { createDeadLetterMetrics, listDeadLetters, resolveDeadLetter, type DeadLetter, type DeadLetterResolution, type ResolvedDeadLetter } from './dead-letters';
import { createRedriveMetrics, redriveQuarantined, type RedriveResult } from './redrive';
import { replayToConsumer, type ReplayRequest, type ReplayResult } from './replay';

/**
 * What the portal's admin API does to consumer queues: replay from the archive, read their stats,
 * redrive quarantined records, and list, redrive or discard dead letters.
 */
export interface QueueOperations {
  replay(req: ReplayRequest): Promise<ReplayResult>;
  /** Undefined when the consumer has nothing un-acked. */
  stats(consumerId: string): Promise<QueueStats | undefined>;
  /** Each quarantined record's redrive, in the order of `ids` (redrive.ts). */
  redrive(ids: readonly string[]): Promise<RedriveResult[]>;
  /** The consumer's open dead letters, oldest first (dead-letters.ts). */
  deadLetters(consumerId: string): Promise<{ dead_letters: DeadLetter[]; truncated: boolean }>;
  /** Redrives or discards one open dead letter; undefined when the consumer has no such open one. */
  resolveDeadLetter(consumerId: string, id: string, resolution: DeadLetterResolution): Promise<ResolvedDeadLetter | undefined>;
}

/** Built once per process: it registers the redrive counter on `metrics`. */
export function queueOperations(deps: { db: Knex; kafka: Kafka; logger: Logger; metrics: Registry }): QueueOperations {
  const store = KnexDeliveryStore.create(deps.db);
  const redriveDeps = { store, logger: deps.logger, metrics: createRedriveMetrics(deps.metrics) };
  const deadLetterMetrics = createDeadLetterMetrics(deps.metrics);
  return {
    replay: (req) => replayToConsumer({ kafka: deps.kafka, store, logger: deps.logger }, req),
    stats: async (consumerId) => (await store.queueStats(consumerId))[0],
    redrive: (ids) => redriveQuarantined(redriveDeps, ids),
    deadLetters: (consumerId) => listDeadLetters(deps.db, consumerId),
    resolveDeadLetter: async (consumerId, id, resolution) => {
      const resolved = await resolveDeadLetter(deps.db, consumerId, id, resolution);
      if (resolved) deadLetterMetrics.resolved.inc({ resolution });
      return resolved;
    },
  };
}
