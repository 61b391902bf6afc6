import { statement } from './statement';

/**
 * In flight: the consumer's leased deliveries, as the portal's message browser lists them (no lock and
 * no change). A leased delivery is a leased head or in the leased run after one, so the walk starts at
 * the heads (deliveries_heads: as many entries as open correlation ids, not the whole backlog) and
 * follows each leased head's run, the first `:max` in head order. The consumer as a range: lease.ts
 * says why.
 */
export const IN_FLIGHT = statement(
  'in-flight',
  `WITH heads AS (
       SELECT id, correlation_id FROM deliveries
        WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND NOT dead_lettered
          AND state = 'leased' AND visible_at > now() AND visible_at < 'infinity'
        ORDER BY consumer_id, id LIMIT :max
     ),
     runs AS (
       SELECT h.id AS head_id, f.id FROM heads h
        CROSS JOIN LATERAL (
          SELECT id FROM deliveries
           WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id >= h.id
             AND acked_at IS NULL AND state = 'leased' AND visible_at > now()
           ORDER BY id LIMIT :max
        ) f
     )
     SELECT d.id, d.message_id, d.correlation_id, d.receive_count, d.visible_at AS lease_ends_at, m.message_type, m.published_at, m.body
       FROM runs r
       JOIN deliveries d ON d.id = r.id
       JOIN messages m ON m.workspace_id = d.workspace_id AND m.message_id = d.message_id
      ORDER BY r.head_id, r.id
      LIMIT :max`,
);
