import { statement, type Statement } from './statement';

/**
 * A nack (or the Sandbox's lost ack), one statement, answering each handle as releasing them one at a
 * time in the caller's order would: a current lease is released after `:delayMs` with the leased run
 * after it (released at once; their handles stop working), so a handle an earlier handle of the batch
 * released is stale. The rows from each story's first named row on are locked in id order first (no
 * deadlock between batches). A release changes no head: the rows stay un-acked. A lost ack is no nack:
 * not counted as one, at most once per delivery, recorded as a duplicate fault.
 */
export function releaseStatement(mode: 'nack' | 'lost_ack'): Statement {
  const lostAck = mode === 'lost_ack';
  return statement(
    `release.${mode}`,
    `WITH named AS (
           SELECT id, generation, position FROM unnest(:ids::bigint[], :generations::int[]) WITH ORDINALITY AS n(id, generation, position)
         ),
         groups AS (
           SELECT d.correlation_id, min(d.id) AS from_id FROM deliveries d
            WHERE d.id = ANY(ARRAY(SELECT id FROM named)) AND d.consumer_id = :consumerId
            GROUP BY d.correlation_id
         ),
         locked AS MATERIALIZED (
           SELECT d.id, d.correlation_id, d.lease_generation FROM deliveries d JOIN groups g ON g.correlation_id = d.correlation_id
            WHERE d.consumer_id = :consumerId AND d.id >= g.from_id AND d.acked_at IS NULL AND d.state = 'leased'
            ORDER BY d.id FOR UPDATE OF d
         ),
         current AS (
           SELECT l.id, l.correlation_id, min(n.position) AS position
             FROM locked l JOIN named n ON n.id = l.id AND n.generation = l.lease_generation${
               lostAck ? `\n            WHERE NOT EXISTS (SELECT 1 FROM consumer_fault_events e WHERE e.delivery_id = l.id AND e.kind = 'duplicate')` : ''
             }
            GROUP BY l.id, l.correlation_id
         ),
         done AS (
           SELECT c.id, c.correlation_id, c.position FROM current c
            WHERE NOT EXISTS (SELECT 1 FROM current e WHERE e.correlation_id = c.correlation_id AND e.position < c.position AND e.id < c.id)
         ),
         run_from AS (SELECT correlation_id, min(id) AS from_id FROM done GROUP BY correlation_id),
         released AS (
           UPDATE deliveries d
              SET state = 'queued', lease_generation = d.lease_generation + 1,
                  visible_at = CASE WHEN d.id IN (SELECT id FROM done) THEN now() + (:delayMs * interval '1 millisecond') ELSE now() END${
                    lostAck
                      ? ''
                      : `,
                  nack_count = d.nack_count + CASE WHEN d.id IN (SELECT id FROM done) THEN 1 ELSE 0 END,
                  last_nacked_at = CASE WHEN d.id IN (SELECT id FROM done) THEN now() ELSE d.last_nacked_at END`
                  }
             FROM locked l JOIN run_from r ON r.correlation_id = l.correlation_id
            WHERE d.id = l.id AND l.id >= r.from_id
           RETURNING d.id
         ),${
           lostAck
             ? `
         faulted AS (
           INSERT INTO consumer_fault_events (consumer_id, delivery_id, message_id, kind)
           SELECT :consumerId, d.id, d.message_id, 'duplicate' FROM deliveries d WHERE d.id IN (SELECT id FROM done)
         ),`
             : ''
         }
         woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM released))
         SELECT done.position, (SELECT count(*) FROM woken) AS woken FROM (SELECT 1) one LEFT JOIN done ON true`,
  );
}
