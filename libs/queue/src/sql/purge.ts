import { statement } from './statement';

/**
 * A purge of consumer `:consumerId`'s stories `:correlationIds`, their story locks held
 * (lock-purge-stories.ts, earlier in the transaction, so this statement's snapshot holds every
 * un-acked delivery of them): every un-acked delivery up to `:mark` — waiting, delayed or leased — is
 * settled as a discarded dead letter is, acked with a new lease generation, so a receipt handle of it
 * is stale and the row stays until the queue window ends (a Kafka redelivery does not enqueue it
 * again). Open dead letters (visible_at 'infinity', tested on the row itself so a dead-lettering
 * committed while this statement waited is seen) are a separate list and stay. The rows are locked in
 * id order first, as every statement waiting for delivery rows does (named-leases-locked.ts), so a
 * nack of the same rows cannot close a cycle. A story whose head was purged gets its next head — its
 * oldest row still un-acked, a dead letter or a delivery enqueued after the mark — and when that one
 * is visible the consumer is NOTIFYed (at COMMIT), as an ack does.
 */
export const PURGE = statement(
  'purge',
  `WITH doomed AS MATERIALIZED (
         SELECT id, correlation_id, is_head FROM deliveries
          WHERE consumer_id = :consumerId AND correlation_id = ANY(:correlationIds::text[]) AND acked_at IS NULL
            AND id <= :mark AND visible_at < 'infinity'
          ORDER BY id FOR UPDATE
       ),
       purged AS (
         UPDATE deliveries d SET state = 'acked', acked_at = now(), is_head = false, lease_generation = d.lease_generation + 1
           FROM doomed WHERE d.id = doomed.id
         RETURNING d.id
       ),
       promoted AS (
         UPDATE deliveries d SET is_head = true
           FROM (SELECT DISTINCT correlation_id FROM doomed WHERE is_head) s
           CROSS JOIN LATERAL (
             SELECT id FROM deliveries x
              WHERE x.consumer_id = :consumerId AND x.correlation_id = s.correlation_id AND x.acked_at IS NULL
                AND x.id NOT IN (SELECT id FROM doomed)
              ORDER BY x.id LIMIT 1
           ) n
          WHERE d.id = n.id
         RETURNING d.visible_at
       ),
       woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM promoted WHERE visible_at <= now()))
       SELECT (SELECT count(*) FROM purged)::int AS purged, (SELECT count(*) FROM woken) AS woken`,
);
