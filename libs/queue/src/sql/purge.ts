import { statement } from './statement';

/**
 * One pass of a purge over consumer `:consumerId`'s stories `:correlationIds`, their story locks held
 * (lock-purge-stories.ts, earlier in the transaction, so this statement's snapshot holds every
 * un-acked delivery of them). Each story settles its newest `:perStory` un-acked deliveries up to its
 * bound (`:bounds`, parallel to the stories: the mark, the delivery sequence when the purge began, or
 * below what an earlier pass settled) — waiting, delayed or leased — as a discarded dead letter is:
 * acked with a new lease generation, so a receipt handle of it is stale and the row stays until the
 * queue window ends (a Kafka redelivery does not enqueue it again). Newest first and at most
 * `:perStory` a story, so a pass stays well inside the statement timeout however long the stories are,
 * and a story's head goes only in the pass that settles the rest of it: no message of it becomes
 * receivable halfway. Open dead letters (visible_at 'infinity', tested on the row itself so a
 * dead-lettering committed while this statement waited is seen) are a separate list and stay. The
 * rows are locked in id order, as every statement waiting for delivery rows locks them
 * (named-leases-locked.ts), so a nack of the same rows cannot close a cycle. A story whose head was
 * purged gets its next head — a dead letter or a delivery enqueued after the mark — and when that one
 * is visible the consumer is NOTIFYed (at COMMIT), as an ack does. `unfinished` maps each story with
 * more to settle to its bound for the next pass. The story's own index (deliveries_pending) read
 * backwards from the bound finds each story's newest rows without passing over what was settled.
 */
export const PURGE = statement(
  'purge',
  `WITH newest AS MATERIALIZED (
         SELECT s.correlation_id, n.id, n.rank
           FROM unnest(:correlationIds::text[], :bounds::bigint[]) AS s(correlation_id, bound)
           CROSS JOIN LATERAL (
             SELECT id, row_number() OVER (ORDER BY id DESC) AS rank FROM (
               SELECT id FROM deliveries
                WHERE consumer_id = :consumerId AND correlation_id = s.correlation_id AND acked_at IS NULL
                  AND id <= s.bound AND visible_at < 'infinity'
                ORDER BY id DESC LIMIT :perStory::int + 1
             ) candidates
           ) n
       ),
       doomed AS MATERIALIZED (
         SELECT id, correlation_id, is_head FROM deliveries
          WHERE id IN (SELECT id FROM newest WHERE rank <= :perStory) AND acked_at IS NULL AND visible_at < 'infinity'
          ORDER BY id FOR UPDATE
       ),
       purged AS (
         UPDATE deliveries d SET state = 'acked', acked_at = now(), purged_at = now(), is_head = false, lease_generation = d.lease_generation + 1
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
       woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM promoted WHERE visible_at <= now())),
       unfinished AS (
         SELECT correlation_id, min(id) FILTER (WHERE rank <= :perStory) - 1 AS bound
           FROM newest GROUP BY correlation_id HAVING max(rank) > :perStory
       )
       SELECT (SELECT count(*) FROM purged)::int AS purged, (SELECT count(*) FROM woken) AS woken,
              (SELECT coalesce(json_object_agg(correlation_id, bound::text), '{}') FROM unfinished) AS unfinished`,
);
