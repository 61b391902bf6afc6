import type { Redis } from '@bus/limits';

/** SQS allows one PurgeQueue of a queue every 60 seconds; a second one within them is PurgeQueueInProgress. */
export const PURGE_INTERVAL_MS = 60_000;

/** The mark of a queue's last PurgeQueue, shared by every pull-api replica. */
export interface PurgeMarks {
  /** Marks the queue purged now; false when a purge marked it within PURGE_INTERVAL_MS. */
  take(consumerId: string): Promise<boolean>;
  /** Removes the mark of a purge that failed, so the caller may try again at once. */
  release(consumerId: string): Promise<void>;
}

/**
 * The marks in Redis, one key per queue expiring after PURGE_INTERVAL_MS (SET NX: of two replicas
 * purging at once, one takes it). Without Redis a PurgeQueue answers 503: the rule cannot be kept.
 */
export function redisPurgeMarks(redis: Redis): PurgeMarks {
  const key = (consumerId: string) => `sqs-purge:${consumerId}`;
  return {
    take: async (consumerId) => (await redis.set(key(consumerId), String(Date.now()), 'PX', PURGE_INTERVAL_MS, 'NX')) === 'OK',
    release: async (consumerId) => {
      await redis.del(key(consumerId));
    },
  };
}
