import type { PeekFilter, ReceiveGate } from '../queue-store';
import { gateConditions } from './gate';
import { statement, type Statement } from './statement';

/**
 * Peek: no lock and no change. The free heads as the receive finds them (deliveries_heads, oldest
 * first), each followed by the un-acked rest of its story, the first `:max` in that order. Filtered by
 * message type, every free head is looked at (a receive's order is over all of them). The consumer as
 * a range and the order by (consumer_id, id): deliveries_heads, not the primary key (lease.ts says why).
 */
export function peekStatement(filter: PeekFilter, gate: ReceiveGate | undefined): Statement {
  const gated = gateConditions(gate);
  return statement(
    'peek',
    `WITH heads AS (
         SELECT id, correlation_id FROM deliveries
          WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND visible_at <= now()${filter.correlationId === undefined ? '' : ' AND correlation_id = :correlationId'}${gated}
          ORDER BY consumer_id, id${filter.messageType === undefined ? ' LIMIT :max' : ''}
       ),
       runs AS (
         SELECT h.id AS head_id, f.id FROM heads h
          CROSS JOIN LATERAL (
            SELECT id FROM deliveries
             WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id >= h.id AND acked_at IS NULL
             ORDER BY id LIMIT :max
          ) f
       )
       SELECT d.id, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body
         FROM runs r
         JOIN deliveries d ON d.id = r.id
         JOIN messages m ON m.workspace_id = d.workspace_id AND m.message_id = d.message_id
        ${filter.messageType === undefined ? '' : 'WHERE m.message_type = :messageType'}
        ORDER BY r.head_id, r.id
        LIMIT :max`,
  );
}
