/**
 * A test run's consumers' side (docs/testing-tools.md#test-runs): per consumer connection of the
 * workspace, its copies of the run's accepted messages — enqueued, received (at least once), acked —
 * and how long publish→first receive and first receive→ack took (median and max, in ms). Bound:
 * `?` the workspace, the consumer ids, the message ids and their acceptance times (paired arrays).
 * Each consumer's copies are found by (consumer_id, message_id), the unique index, so the report reads
 * only the run's rows whatever the queue keeps.
 */
export const RUN_DELIVERIES = `
  WITH run AS (SELECT * FROM unnest(?::text[], ?::timestamptz[]) AS r(message_id, accepted_at)),
       copies AS (
         SELECT d.consumer_id, d.first_received_at, a.acked_at,
                (extract(epoch FROM d.first_received_at - r.accepted_at) * 1000)::float8 AS to_receive_ms,
                (extract(epoch FROM a.acked_at - d.first_received_at) * 1000)::float8 AS to_ack_ms
           FROM unnest(?::text[]) AS c(id)
           JOIN deliveries d ON d.consumer_id = c.id
           JOIN run r ON r.message_id = d.message_id
           -- a copy a purge settled was not acked by its consumer
           CROSS JOIN LATERAL (SELECT CASE WHEN d.purged_at IS NULL THEN d.acked_at END AS acked_at) a
          WHERE d.workspace_id = ?
       )
  SELECT consumer_id, count(*)::int AS enqueued, count(first_received_at)::int AS received, count(acked_at)::int AS acked,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY to_receive_ms) AS receive_median_ms, max(to_receive_ms) AS receive_max_ms,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY to_ack_ms) AS ack_median_ms, max(to_ack_ms) AS ack_max_ms
    FROM copies GROUP BY consumer_id`;
