import { STORE_MESSAGES_ONCE } from './store-messages';

/**
 * The enqueue of a Kafka batch, after its stories' locks (story-lock.ts) in the same transaction, so its
 * snapshot holds every delivery of them: stores each message once and inserts one delivery per active
 * consumer connection of its workspace, their ids — the FIFO sequence — in the batch's order. Idempotent
 * on (consumer, message_id) without ON CONFLICT: with the stories locked a delivery already there is in
 * the snapshot and is not inserted again, so no insert pays for a speculative one (an index probe and
 * 48 bytes of WAL a row, bench:fanout); the unique index would still refuse a second copy, failing the
 * batch for Kafka to hand over again. A new delivery is its story's head when it is the story's first new
 * one and the story has no un-acked delivery. Each consumer that got a new row is NOTIFYed once,
 * delivered by Postgres at COMMIT, so a woken receiver always finds the rows. Prepared:
 * Postgres' parse and plan were half of this statement's time (its statement log, bench:e2e).
 */
export const ENQUEUE = `WITH stored AS (
       ${STORE_MESSAGES_ONCE}
     ),
     -- A Kafka batch can hold one message twice (a producer's retry): its first place counts.
     batch AS (
       SELECT DISTINCT ON (workspace_id, message_id) *
         FROM unnest(:workspaceIds::text[], :messageIds::text[], :correlationIds::text[]) WITH ORDINALITY AS b(workspace_id, message_id, correlation_id, position)
        ORDER BY workspace_id, message_id, position
     ),
     -- Each (consumer, message) of the batch not delivered yet; with the stories locked, the snapshot
     -- holds every delivery of them.
     fresh AS (
       SELECT c.id AS consumer_id, b.workspace_id, b.message_id, b.correlation_id, b.position
         FROM batch b JOIN connections c ON c.workspace_id = b.workspace_id AND c.kind = 'consumer' AND c.status = 'active'
        WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.consumer_id = c.id AND d.message_id = b.message_id)
     ),
     -- A new delivery is its story's head when it is the story's first new one and the story has no
     -- un-acked delivery.
     marked AS (
       SELECT f.*, f.position = min(f.position) OVER (PARTITION BY f.consumer_id, f.correlation_id)
                   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.consumer_id = f.consumer_id AND d.correlation_id = f.correlation_id AND d.acked_at IS NULL)
                   AS is_head
         FROM fresh f
     ),
     inserted AS (
       INSERT INTO deliveries (consumer_id, workspace_id, message_id, correlation_id, is_head)
       SELECT consumer_id, workspace_id, message_id, correlation_id, is_head FROM marked
        ORDER BY position, consumer_id
       RETURNING consumer_id
     ),
     -- Delivered by Postgres at COMMIT, so a woken receiver always finds the rows.
     notified AS (SELECT pg_notify(:channel, consumer_id) FROM (SELECT DISTINCT consumer_id FROM inserted) woken)
     SELECT consumer_id, (SELECT count(*) FROM notified) AS notified FROM inserted`;
