/**
 * Every consumer connection's copy of some messages of a workspace, for a story export
 * (story-export.ts): the connections by their workspace, each copy by deliveries_message_consumer,
 * in the order of the consumer and then of enqueue. first_received_at is the lease statement's: the
 * first receive that handed the copy out. A copy a purge settled is `purged`, not acked. A dead letter's 'infinity' is no time: `dead_lettered`
 * says what it is.
 */
export const STORY_EXPORT_DELIVERIES = `SELECT d.consumer_id, d.message_id, CASE WHEN d.purged_at IS NULL THEN d.state::text ELSE 'purged' END AS state, d.enqueued_at,
              CASE WHEN isfinite(d.visible_at) THEN d.visible_at END AS visible_at, d.visible_at = 'infinity' AS dead_lettered,
              d.receive_count, d.first_received_at, d.acked_at, d.nack_count, d.last_nacked_at
         FROM connections c
         JOIN deliveries d ON d.consumer_id = c.id AND d.message_id = ANY(:messageIds::text[])
        WHERE c.workspace_id = :workspaceId AND c.kind = 'consumer'
        ORDER BY d.consumer_id, d.id`;
