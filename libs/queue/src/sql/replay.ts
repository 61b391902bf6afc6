/**
 * A replay's delivery (positional bindings: workspace, message, correlation id, consumer, workspace):
 * a new one for an active consumer connection of the message's workspace, or the acked one queued
 * again with a new lease generation; a live one is left alone, so a replay never makes a second live
 * copy. The story's head is set afterwards (mark-story-head.ts), under the story's lock.
 */
export const REPLAY = `INSERT INTO deliveries (consumer_id, workspace_id, message_id, correlation_id)
         SELECT c.id, ?, ?, ? FROM connections c
          WHERE c.id = ? AND c.workspace_id = ? AND c.kind = 'consumer' AND c.status = 'active'
         ON CONFLICT (consumer_id, message_id) DO UPDATE
           SET state = 'queued', visible_at = now(), acked_at = NULL, purged_at = NULL, lease_generation = deliveries.lease_generation + 1
           WHERE deliveries.state = 'acked'
         RETURNING consumer_id`;
