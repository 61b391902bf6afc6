/**
 * Per consumer connection with un-acked deliveries (or only the one bound to `?`): depth, visible, in
 * flight (leased), delayed (a nack's delay), dead letters ('infinity') and the oldest enqueue time, over
 * deliveries_pending's rows.
 */
export function queueStatsStatement(oneConsumer: boolean): string {
  return `SELECT consumer_id, count(*)::int AS depth,
              (count(*) FILTER (WHERE visible_at <= now()))::int AS visible,
              (count(*) FILTER (WHERE state = 'leased' AND visible_at > now()))::int AS in_flight,
              (count(*) FILTER (WHERE state = 'queued' AND visible_at > now() AND visible_at < 'infinity'))::int AS delayed,
              (count(*) FILTER (WHERE visible_at = 'infinity'))::int AS dead_letters,
              min(enqueued_at) AS oldest
         FROM deliveries WHERE acked_at IS NULL ${oneConsumer ? 'AND consumer_id = ?' : ''} GROUP BY consumer_id`;
}
