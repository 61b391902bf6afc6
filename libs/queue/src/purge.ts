import { arrayParameter, DELIVERY_CHANNEL, rawQuery, type Knex } from '@bus/db';
import { LOCK_PURGE_STORIES } from './sql/lock-purge-stories';
import { PURGE } from './sql/purge';
import { PURGE_MARK } from './sql/purge-mark';

/** Stories one purge transaction locks and settles: the advisory locks it holds stay bounded. */
export const PURGE_STORIES_PER_BATCH = 500;

/**
 * Purges consumer connection `consumerId`'s queue (docs/delivery.md "Purge"): every message waiting
 * (visible, delayed by a nack or a gate) or in flight when the purge begins is settled as a discarded
 * dead letter is — acked, its receipt handles stale — and each story's next head marked, so messages
 * enqueued afterwards are received in order. Open dead letters are a separate list and stay (each
 * still its story's head). Story by story, a batch of stories per transaction, each under the stories'
 * locks (story-lock.ts) like every write that decides a head; resolves with how many deliveries it
 * removed. `storiesPerBatch` is for tests of the batching.
 */
export async function purgeQueue(db: Knex, consumerId: string, storiesPerBatch = PURGE_STORIES_PER_BATCH): Promise<number> {
  const { rows } = await rawQuery<{ mark: string }>(db, PURGE_MARK.text);
  const mark = rows[0]?.mark ?? '0';
  let after = '0';
  let purged = 0;
  for (;;) {
    const batch = await db.transaction(async (trx) => {
      const locked = await rawQuery<{ last_head: string | null; correlation_ids: string[] }>(trx, LOCK_PURGE_STORIES.text, {
        consumerId,
        after,
        mark,
        stories: storiesPerBatch,
      });
      const stories = locked.rows[0];
      if (!stories || stories.last_head === null) return undefined;
      const settled = await rawQuery<{ purged: number }>(trx, PURGE.text, {
        consumerId,
        correlationIds: arrayParameter(stories.correlation_ids),
        mark,
        channel: DELIVERY_CHANNEL,
      });
      return { lastHead: stories.last_head, purged: settled.rows[0]?.purged ?? 0 };
    });
    if (!batch) return purged;
    purged += batch.purged;
    after = batch.lastHead;
  }
}
