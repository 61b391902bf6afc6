/**
 * The stored bytes of some accepted messages of a workspace, for a story export (story-export.ts): by
 * the messages' primary key (workspace_id, message_id). A message delivery has not stored yet (or the
 * queue retention removed) has no row.
 */
export const STORY_EXPORT_BODIES = `SELECT message_id, body FROM messages WHERE workspace_id = :workspaceId AND message_id = ANY(:messageIds::text[])`;
