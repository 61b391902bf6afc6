import type { DeadLetterResolution } from '@bus/contracts';

/**
 * Closes open dead letter `:id` of `:consumerId` (the closed rows are the ones this statement
 * resolved: their resolved_at is set) and changes its delivery — redriven: queued and visible now, its
 * receive count back to 0, still its story's head; discarded: acked, so its story gets its next head
 * (the caller holds the story's lock), unless a replay made an older row the head meanwhile. Either way
 * a new lease generation, and the consumer's long polls are woken.
 */
export function resolveDeadLetterStatement(resolution: DeadLetterResolution): string {
  const change =
    resolution === 'redriven'
      ? `state = 'queued', visible_at = now(), dead_lettered = false, receive_count = 0`
      : `state = 'acked', acked_at = now(), visible_at = now(), dead_lettered = false, is_head = false`;
  return `WITH closed AS (
         UPDATE dead_letters SET resolved_at = now(), resolution = :resolution
          WHERE id = :id AND consumer_id = :consumerId AND resolved_at IS NULL
         RETURNING id, delivery_id, message_id, correlation_id, receive_count, dead_lettered_at, resolved_at
       ),
       changed AS (
         UPDATE deliveries d SET ${change}, lease_generation = d.lease_generation + 1
           FROM closed WHERE d.id = closed.delivery_id
         RETURNING d.id, d.consumer_id, d.correlation_id, d.acked_at
       ),
       -- A discarded delivery's story gets its next head, unless another of its rows is the head.
       promoted AS (
         UPDATE deliveries d SET is_head = true
           FROM changed c CROSS JOIN LATERAL (
             SELECT id FROM deliveries
              WHERE consumer_id = c.consumer_id AND correlation_id = c.correlation_id AND acked_at IS NULL AND id <> c.id
              ORDER BY id LIMIT 1
           ) n
          WHERE d.id = n.id AND c.acked_at IS NOT NULL
            AND NOT EXISTS (
              SELECT 1 FROM deliveries o WHERE o.consumer_id = c.consumer_id AND o.correlation_id = c.correlation_id AND o.acked_at IS NULL AND o.is_head AND o.id <> c.id
            )
         RETURNING d.id
       ),
       woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM changed))
       SELECT closed.*, (SELECT count(*) FROM woken) AS woken, (SELECT count(*) FROM promoted) AS promoted FROM closed`;
}
