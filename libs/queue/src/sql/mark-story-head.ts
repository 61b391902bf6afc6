/**
 * Sets the head marker of consumer `:consumerId`'s story `:correlationId` on its oldest un-acked
 * delivery and on no other, the caller holding the story's lock: a replay may queue again an acked row
 * older than the current head, so the head is computed, not moved by one. Writes only the rows whose
 * marker changes.
 */
export const MARK_STORY_HEAD = `UPDATE deliveries d SET is_head = (d.id = h.id)
       FROM (SELECT min(id) AS id FROM deliveries WHERE consumer_id = :consumerId AND correlation_id = :correlationId AND acked_at IS NULL) h
      WHERE d.consumer_id = :consumerId AND d.correlation_id = :correlationId AND d.acked_at IS NULL AND d.is_head <> (d.id = h.id)`;
