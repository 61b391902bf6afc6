import { arrayParameter, rawQuery, type Knex } from '@bus/db';
import { LOCK_STORIES } from './sql/lock-stories';
import { LOCK_STORIES_OF_DELIVERIES } from './sql/lock-stories-of-deliveries';

/**
 * The story lock: a transaction-scoped advisory lock per (workspace, correlation id), on a key of its
 * own (libs/db deliveryStoryKey: apart from the gateway's lock of the same story). Every write that
 * changes which of a story's deliveries are un-acked — enqueue, ack, replay, a discarded dead letter —
 * takes it, in its own statement at the start of its transaction, before it decides which delivery is
 * the story's head (docs/delivery.md "The lease rule"). The deciding statement then starts after the
 * lock was granted, so its snapshot holds every committed change to the story and no other write to it
 * is in flight: an enqueue of a story's next message racing the ack of its head leaves exactly one head.
 * A write of one consumer's rows alone (an ack, a discarded dead letter) holds the story's lock shared
 * and that consumer's own lock of the story exclusive (sql/lock-stories-of-deliveries.ts), so the
 * consumers of one story ack side by side. Locks are taken in one sorted order by every writer, so two
 * never wait for each other in a cycle. Leases, nacks and extensions do not change the head and never
 * take it. The retention sweep tries it
 * (without waiting) for each delivery and each stored message it removes, and marks the next head of a
 * story whose head it removed.
 */
/** Locks the stories of `stories` (duplicates are taken once). */
export async function lockStories(trx: Knex.Transaction, stories: ReadonlyArray<{ workspaceId: string; correlationId: string }>): Promise<void> {
  if (stories.length === 0) return;
  await rawQuery(trx, LOCK_STORIES, {
    workspaceIds: arrayParameter(stories.map((s) => s.workspaceId)),
    correlationIds: arrayParameter(stories.map((s) => s.correlationId)),
  });
}

/** Locks the stories of consumer `consumerId`'s deliveries `ids` (ids of other consumers are ignored). */
export async function lockStoriesOfDeliveries(trx: Knex.Transaction, consumerId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await rawQuery(trx, LOCK_STORIES_OF_DELIVERIES, { ids: arrayParameter([...ids]), consumerId });
}
