import type { PeekFilter, ReceiveGate } from '../queue-store';
import { gateConditions } from './gate';
import { statement, type Statement } from './statement';

/**
 * How far a peek filtered by message type looks: the receivable messages of this many correlation
 * ids, oldest head first (at most 10 of each). A filter matching little would otherwise walk every
 * receivable message of the queue — seconds at a million, past the statement timeout beyond — for
 * each call a looping client makes; bounded, a call reads at most ~10,000 messages' rows.
 */
export const PEEK_FILTER_HEADS = 1_000;

/**
 * Peek: no lock and no change. The free heads as the receive finds them (deliveries_heads, oldest
 * first), each followed by the un-acked rest of its story, the first `:max` in that order. By
 * correlation id: that story's head alone, found by the story's own index (deliveries_pending).
 * By message type: over the first PEEK_FILTER_HEADS heads only; such an answer has at least one row
 * (a row of nulls when nothing matched), each saying whether there were more heads (`more_heads`),
 * so the caller can say the answer stopped short. The consumer as a range and the order by
 * (consumer_id, id): deliveries_heads, not the primary key (lease.ts says why).
 */
export function peekStatement(filter: PeekFilter, gate: ReceiveGate | undefined): Statement {
  const gated = gateConditions(gate);
  const byType = filter.messageType !== undefined;
  const heads =
    filter.correlationId !== undefined
      ? `SELECT id, correlation_id FROM deliveries
          WHERE consumer_id = :consumerId AND correlation_id = :correlationId AND acked_at IS NULL AND is_head AND NOT dead_lettered AND visible_at <= now()${gated}`
      : `SELECT id, correlation_id FROM deliveries
          WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND NOT dead_lettered AND visible_at <= now()${gated}
          ORDER BY consumer_id, id LIMIT ${byType ? `${PEEK_FILTER_HEADS + 1}` : ':max'}`;
  const found = `SELECT d.id, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body, r.head_id, r.id AS run_id
         FROM runs r
         JOIN deliveries d ON d.id = r.id
         JOIN messages m ON m.workspace_id = d.workspace_id AND m.message_id = d.message_id
        ${byType ? 'WHERE m.message_type = :messageType' : ''}
        ORDER BY r.head_id, r.id
        LIMIT :max`;
  return statement(
    `peek${filter.correlationId === undefined ? '' : '.story'}${byType ? '.type' : ''}`,
    `WITH heads AS MATERIALIZED (${heads}),
       runs AS (
         SELECT h.id AS head_id, f.id FROM (SELECT id, correlation_id FROM heads ORDER BY id LIMIT ${PEEK_FILTER_HEADS}) h
          CROSS JOIN LATERAL (
            SELECT id FROM deliveries
             WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id >= h.id AND acked_at IS NULL
             ORDER BY id LIMIT :max
          ) f
       )
       ${
         byType
           ? `SELECT found.*, (SELECT count(*) FROM heads) > ${PEEK_FILTER_HEADS} AS more_heads
                FROM (VALUES (1)) one LEFT JOIN (${found}) found ON true
               ORDER BY found.head_id, found.run_id`
           : found
       }`,
  );
}
