import { arrayParameter, DELIVERY_CHANNEL, rawQuery, type Knex } from '@bus/db';
import { LOCK_PURGE_STORIES } from './sql/lock-purge-stories';
import { PURGE } from './sql/purge';
import { PURGE_MARK } from './sql/purge-mark';

/** Stories one purge transaction locks and settles: the advisory locks it holds stay bounded. */
export const PURGE_STORIES_PER_BATCH = 500;
/**
 * Deliveries one purge statement settles at most, shared among its stories: about 0.1 s of Postgres'
 * time here (docs/delivery.md "Purge"), so every statement ends far inside the statement timeout and
 * the story locks a pass holds delay an enqueue of those stories that little.
 */
export const PURGE_ROWS_PER_STATEMENT = 5_000;

export interface PurgeBatchSizes {
  storiesPerBatch: number;
  rowsPerStatement: number;
}

/**
 * Purges consumer connection `consumerId`'s queue (docs/delivery.md "Purge"): every message waiting
 * (visible, delayed by a nack or a gate) or in flight when the purge begins is settled as a discarded
 * dead letter is — acked, its receipt handles stale — and each story's next head marked, so messages
 * enqueued afterwards are received in order. Open dead letters are a separate list and stay (each
 * still its story's head). Pass by pass, each its own transaction under the locks of a batch of
 * stories (story-lock.ts) like every write that decides a head, each settling a bounded number of
 * each story's newest deliveries; a story longer than that takes several passes, and the batch moves
 * on past a story once it is settled. Resolves with how many deliveries it removed. `sizes` is for
 * tests of the batching.
 */
export async function purgeQueue(
  db: Knex,
  consumerId: string,
  sizes: PurgeBatchSizes = { storiesPerBatch: PURGE_STORIES_PER_BATCH, rowsPerStatement: PURGE_ROWS_PER_STATEMENT },
): Promise<number> {
  const { rows } = await rawQuery<{ mark: string }>(db, PURGE_MARK.text);
  const mark = rows[0]?.mark ?? '0';
  // Heads up to `after` are settled; `bounds` holds where each unfinished story's next pass starts.
  let after = '0';
  const bounds = new Map<string, string>();
  let purged = 0;
  for (;;) {
    const pass = await db.transaction(async (trx) => {
      const locked = await rawQuery<{ heads: string[]; correlation_ids: string[] }>(trx, LOCK_PURGE_STORIES.text, {
        consumerId,
        after,
        mark,
        stories: sizes.storiesPerBatch,
      });
      const stories = locked.rows[0];
      if (!stories || stories.correlation_ids.length === 0) return undefined;
      const settled = await rawQuery<{ purged: number; unfinished: Record<string, string> }>(trx, PURGE.text, {
        consumerId,
        correlationIds: arrayParameter(stories.correlation_ids),
        bounds: arrayParameter(stories.correlation_ids.map((story) => bounds.get(story) ?? mark)),
        perStory: Math.max(1, Math.floor(sizes.rowsPerStatement / stories.correlation_ids.length)),
        channel: DELIVERY_CHANNEL,
      });
      const unfinished = new Map(Object.entries(settled.rows[0]?.unfinished ?? {}));
      return { heads: stories.heads, correlationIds: stories.correlation_ids, purged: settled.rows[0]?.purged ?? 0, unfinished };
    });
    if (!pass) return purged;
    purged += pass.purged;
    for (const story of pass.correlationIds) bounds.delete(story);
    for (const [story, bound] of pass.unfinished) bounds.set(story, bound);
    // Past every head of the batch, or to just before the oldest head whose story is unfinished.
    const firstUnfinished = pass.correlationIds.findIndex((story) => pass.unfinished.has(story));
    after = firstUnfinished < 0 ? pass.heads[pass.heads.length - 1]! : String(BigInt(pass.heads[firstUnfinished]!) - 1n);
  }
}
