/**
 * The retention sweep's condition on a stored message `t` past its window: kept while a delivery
 * still refers to it, since a consumer receives the body from here (deliveries_message_consumer, led by
 * the message id, answers it). Evaluated under the story's lock (retention.ts writerLock).
 */
export const RETENTION_MESSAGE_KEPT = 'EXISTS (SELECT 1 FROM deliveries d WHERE d.workspace_id = t.workspace_id AND d.message_id = t.message_id)';
