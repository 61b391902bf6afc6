/** Consumer connections a trace lists at most (one row more is read to know there were more). */
export const TRACE_CONSUMERS_MAX = 2_000;

/**
 * The message trace's copies: each consumer connection of workspace `?` (second binding) with its copy
 * of message `?` (first binding) when delivery enqueued one, found by the (consumer_id, message_id)
 * unique index, and that copy's latest dead letter. A LEFT JOIN, so a consumer that has no copy yet is
 * still listed (its state is not_enqueued) — unless it is removed: then only with a copy. A workspace
 * holds at most 1,000 connections that are not removed; removed ones with a copy come on top, hence
 * the bound.
 */
export const MESSAGE_TRACE = `SELECT c.id AS consumer_id, c.status::text AS connection_status, d.state::text AS state, d.enqueued_at,
              -- a dead letter's 'infinity' is no time; its state says what it is
              CASE WHEN isfinite(d.visible_at) THEN d.visible_at END AS visible_at,
              d.receive_count, d.acked_at, d.purged_at, d.nack_count, d.last_nacked_at, l.dead_lettered_at, l.resolution, l.resolved_at, now() AS now
         FROM connections c
         LEFT JOIN deliveries d ON d.consumer_id = c.id AND d.message_id = ?
         LEFT JOIN LATERAL (
           SELECT dead_lettered_at, resolution, resolved_at FROM dead_letters WHERE delivery_id = d.id ORDER BY id DESC LIMIT 1
         ) l ON true
        WHERE c.workspace_id = ? AND c.kind = 'consumer' AND (c.status <> 'removed' OR d.id IS NOT NULL)
        ORDER BY c.id
        LIMIT ${TRACE_CONSUMERS_MAX + 1}`;
