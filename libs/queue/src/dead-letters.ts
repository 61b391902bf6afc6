import { Counter, type Registry } from 'prom-client';
import { METRICS } from '@bus/observability';
import type { DeadLetter, DeadLetterResolution, ResolvedDeadLetter } from '@bus/contracts';
import { DELIVERY_CHANNEL, rawQuery, type Knex, type Row } from '@bus/db';
import { resolveDeadLetterStatement } from './sql/resolve-dead-letter';
import { lockStoriesOfDeliveries } from './story-lock';

/**
 * A consumer's dead letters (docs/testing-tools.md): messages the pull API moved off the
 * queue after the connection's receive threshold. Each stays its correlation id's un-acked head
 * (visible_at 'infinity'), so the messages after it wait until the operator redrives or discards it.
 * The rows' shapes are the admin API's contract (libs/contracts).
 */

/** The most dead letters one listing shows, oldest first; `truncated` says when there are more. */
export const DEAD_LETTERS_LISTED = 1000;

export interface DeadLetterMetrics {
  resolved: Counter<'resolution'>;
}

export function createDeadLetterMetrics(registry: Registry): DeadLetterMetrics {
  return {
    resolved: new Counter({
      ...METRICS.deadLettersResolved,
      help: 'Dead letters an operator redrove or discarded, by resolution',
      registers: [registry],
    }),
  };
}

type DeadLetterRow = Pick<Row<'dead_letters'>, 'id' | 'message_id' | 'correlation_id' | 'receive_count' | 'dead_lettered_at'>;

const deadLetter = (r: DeadLetterRow): DeadLetter => ({
  id: String(r.id),
  message_id: r.message_id,
  correlation_id: r.correlation_id,
  receive_count: r.receive_count,
  dead_lettered_at: r.dead_lettered_at.toISOString(),
});

/** The consumer's open dead letters, oldest first. */
export async function listDeadLetters(db: Knex, consumerId: string): Promise<{ dead_letters: DeadLetter[]; truncated: boolean }> {
  const rows = await db('dead_letters')
    .where({ consumer_id: consumerId })
    .whereNull('resolved_at')
    .orderBy('id')
    .limit(DEAD_LETTERS_LISTED + 1)
    .select('id', 'message_id', 'correlation_id', 'receive_count', 'dead_lettered_at');
  return { dead_letters: rows.slice(0, DEAD_LETTERS_LISTED).map(deadLetter), truncated: rows.length > DEAD_LETTERS_LISTED };
}

/**
 * One statement: closes open dead letter `id` of `consumerId` and changes its delivery — redriven:
 * queued and visible now, its receive count back to 0 (the full threshold again), first of its
 * correlation id as before; discarded: acked, so the messages after it become receivable. Either way
 * a new lease generation, and the consumer's long polls are woken. Undefined when there is no such
 * open dead letter.
 */
export async function resolveDeadLetter(db: Knex, consumerId: string, id: string, resolution: DeadLetterResolution): Promise<ResolvedDeadLetter | undefined> {
  return db.transaction(async (trx) => {
    // A discard acks the delivery: it holds the story's lock (story-lock.ts) and marks the next head.
    const open = await trx('dead_letters').where({ id, consumer_id: consumerId }).whereNull('resolved_at').first('delivery_id');
    if (!open) return undefined;
    await lockStoriesOfDeliveries(trx, consumerId, [String(open.delivery_id)]);
    const { rows } = await rawQuery<DeadLetterRow & { resolved_at: Date }>(trx, resolveDeadLetterStatement(resolution), {
      id,
      consumerId,
      resolution,
      channel: DELIVERY_CHANNEL,
    });
    const row = rows[0];
    if (!row) return undefined;
    return { ...deadLetter(row), resolution, resolved_at: row.resolved_at.toISOString() };
  });
}
