import type { Knex } from 'knex';
import { rawQuery } from './database';
import type { Row } from './tables';

/**
 * Read-only views for the tester's tools (issue 17, docs/testing-tools.md): where an accepted message
 * is (message trace) and what the bus holds for a correlation id (story view). Both the producer
 * routes (gateway) and the operator's admin API answer with these records, so the two can never
 * describe a message differently. Neither carries a message body.
 */

/** Where one consumer connection's copy of a message is. */
export type DeliveryStateName = 'not_enqueued' | 'queued' | 'leased' | 'acked';

export interface DeliveryTrace {
  consumer_id: string;
  /** The consumer connection's own status (active, revoked, removed). */
  connection_status: string;
  /**
   * not_enqueued: delivery has not enqueued it for this consumer (not caught up yet, or the consumer
   * came after it); queued: receivable once `visible_at` has passed; leased: handed out, the lease
   * ends at `visible_at`; acked. A lease that ran out without a new receive counts as queued again.
   */
  state: DeliveryStateName;
  enqueued_at: string | null;
  /** When it becomes receivable (queued) or when the lease ends (leased); null otherwise. */
  visible_at: string | null;
  receive_count: number;
  acked_at: string | null;
  nack_count: number;
  last_nacked_at: string | null;
}

export interface MessageTrace {
  message_id: string;
  message_type: string;
  correlation_id: string;
  producer_connection_id: string;
  accepted_at: string;
  kafka: { partition: number; offset: string };
  /** One entry per consumer connection of the workspace, by connection id. */
  deliveries: DeliveryTrace[];
}

/** A consumer connection LEFT JOINed with its copy of the message: the delivery's columns null when there is none. */
type DeliveryTraceRow = { consumer_id: string; connection_status: string; now: Date } & {
  [C in 'state' | 'enqueued_at' | 'visible_at' | 'receive_count' | 'acked_at' | 'nack_count' | 'last_nacked_at']: Row<'deliveries'>[C] | null;
};

const iso = (at: Date | null): string | null => (at === null ? null : at.toISOString());

/** The trace of an accepted message of `workspaceId`, or undefined when the workspace accepted no such message_id. */
export async function readMessageTrace(db: Knex, workspaceId: string, messageId: string): Promise<MessageTrace | undefined> {
  const accepted = await db('accepted_messages')
    .where({ workspace_id: workspaceId, message_id: messageId })
    .first('message_id', 'message_type', 'correlation_id', 'producer_connection_id', 'accepted_at', 'kafka_partition', 'kafka_offset');
  if (!accepted) return undefined;
  // Every consumer connection of the workspace, with its copy if delivery enqueued one (the
  // (consumer_id, message_id) unique index finds it).
  const { rows } = await rawQuery<DeliveryTraceRow>(
    db,
    `SELECT c.id AS consumer_id, c.status::text AS connection_status, d.state::text AS state, d.enqueued_at, d.visible_at,
              d.receive_count, d.acked_at, d.nack_count, d.last_nacked_at, now() AS now
         FROM connections c
         LEFT JOIN deliveries d ON d.consumer_id = c.id AND d.message_id = ?
        WHERE c.workspace_id = ? AND c.kind = 'consumer'
        ORDER BY c.id`,
    [messageId, workspaceId],
  );
  return {
    message_id: accepted.message_id,
    message_type: accepted.message_type,
    correlation_id: accepted.correlation_id,
    producer_connection_id: accepted.producer_connection_id,
    accepted_at: accepted.accepted_at.toISOString(),
    kafka: { partition: accepted.kafka_partition, offset: String(accepted.kafka_offset) },
    deliveries: rows.map(deliveryTrace),
  };
}

function deliveryTrace(row: DeliveryTraceRow): DeliveryTrace {
  const leaseRanOut = row.state === 'leased' && row.visible_at !== null && row.visible_at <= row.now;
  const state: DeliveryStateName = row.state === null ? 'not_enqueued' : leaseRanOut ? 'queued' : row.state;
  return {
    consumer_id: row.consumer_id,
    connection_status: row.connection_status,
    state,
    enqueued_at: iso(row.enqueued_at),
    visible_at: state === 'queued' || state === 'leased' ? iso(row.visible_at) : null,
    receive_count: row.receive_count ?? 0,
    acked_at: iso(row.acked_at),
    nack_count: row.nack_count ?? 0,
    last_nacked_at: iso(row.last_nacked_at),
  };
}

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

/** What the workspace holds for a correlation id, or undefined when it has neither a state nor an accepted message. */
export async function readStory(db: Knex, workspaceId: string, correlationId: string): Promise<StoryView | undefined> {
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
