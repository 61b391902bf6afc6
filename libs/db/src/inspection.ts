import type { Knex } from 'knex';
import { inOneSnapshot } from './snapshot';

/**
 * Read-only view for the tester's tools (docs/testing-tools.md): what the bus holds for a correlation
 * id (story view). Both the producer routes (gateway) and the operator's admin API answer with it, so
 * the two can never describe a story differently. It carries no message body. The message trace,
 * which reads the consumer queues, is libs/queue's.
 */

/** The most accepted messages a story view lists; `truncated` says when there were more. */
export const STORY_MESSAGES_MAX = 1000;

export interface StoryView {
  correlation_id: string;
  /** The sequence state the gateway checks the next message against (libs/som StoryState), null when no sequence message came yet. */
  state: Record<string, unknown> | null;
  state_updated_at: string | null;
  /** The accepted messages of the correlation id in acceptance order (= Kafka order), oldest first. */
  messages: Array<{ message_id: string; message_type: string; accepted_at: string; producer_connection_id: string }>;
  truncated: boolean;
}

/**
 * What the workspace holds for a correlation id, or undefined when it has neither a state nor an
 * accepted message. The state and the messages are read in one snapshot: a publish commits both
 * together, so the view never shows a state without the message that made it, or the reverse.
 */
export function readStory(db: Knex, workspaceId: string, correlationId: string): Promise<StoryView | undefined> {
  return inOneSnapshot(db, (tx) => readStoryIn(tx, workspaceId, correlationId));
}

async function readStoryIn(db: Knex.Transaction, workspaceId: string, correlationId: string): Promise<StoryView | undefined> {
  const story = await db('story_state').where({ workspace_id: workspaceId, correlation_id: correlationId }).first('state', 'updated_at');
  const rows = await db('accepted_messages')
    .where({ workspace_id: workspaceId, correlation_id: correlationId })
    // One correlation id is one Kafka key, so one partition: the offset orders messages accepted in the same millisecond.
    .orderBy([{ column: 'accepted_at' }, { column: 'kafka_offset' }])
    .limit(STORY_MESSAGES_MAX + 1)
    .select('message_id', 'message_type', 'accepted_at', 'producer_connection_id');
  if (!story && rows.length === 0) return undefined;
  return {
    correlation_id: correlationId,
    state: story?.state ?? null,
    state_updated_at: story ? story.updated_at.toISOString() : null,
    messages: rows.slice(0, STORY_MESSAGES_MAX).map((r) => ({
      message_id: r.message_id,
      message_type: r.message_type,
      accepted_at: r.accepted_at.toISOString(),
      producer_connection_id: r.producer_connection_id,
    })),
    truncated: rows.length > STORY_MESSAGES_MAX,
  };
}
