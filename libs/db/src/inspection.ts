import type { Knex } from 'knex';
import { rawQuery } from './database';
import type { Row } from './tables';

/**
 * Read-only views for the tester's tools (docs/testing-tools.md): where an accepted message
 * is (message trace) and what the bus holds for a correlation id (story view). Both the producer
 * routes (gateway) and the operator's admin API answer with these records, so the two can never
 * describe a message differently. Neither carries a message body.
 */

/** Where one consumer connection's copy of a message is. */
export type DeliveryStateName = 'not_enqueued' | 'queued' | 'leased' | 'acked' | 'dead_lettered' | 'discarded';

/** A fault the Sandbox injected into this delivery (docs/testing-tools.md, consumer fault injection). */
export interface InjectedFault {
  kind: 'duplicate' | 'delay' | 'early_expiry';
  at: string;
  /** The delay added (delay) or the shortened lease's length (early_expiry); null for a duplicate. */
  detail_ms: number | null;
}

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
  /** When it was last dead-lettered, and what the operator did about it (null while open). */
  dead_letter: { dead_lettered_at: string; resolution: 'redriven' | 'discarded' | null; resolved_at: string | null } | null;
  /** The faults injected into it, oldest first. */
  faults: InjectedFault[];
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

/** A consumer connection LEFT JOINed with its copy of the message and its latest dead letter: their columns null when there is none. */
type DeliveryTraceRow = { consumer_id: string; connection_status: string; now: Date } & {
  [C in 'state' | 'enqueued_at' | 'visible_at' | 'receive_count' | 'acked_at' | 'nack_count' | 'last_nacked_at']: Row<'deliveries'>[C] | null;
} & { [C in 'dead_lettered_at' | 'resolution' | 'resolved_at']: Row<'dead_letters'>[C] | null };

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
    `SELECT c.id AS consumer_id, c.status::text AS connection_status, d.state::text AS state, d.enqueued_at,
              -- a dead letter's 'infinity' is no time; its state says what it is
              CASE WHEN isfinite(d.visible_at) THEN d.visible_at END AS visible_at,
              d.receive_count, d.acked_at, d.nack_count, d.last_nacked_at, l.dead_lettered_at, l.resolution, l.resolved_at, now() AS now
         FROM connections c
         LEFT JOIN deliveries d ON d.consumer_id = c.id AND d.message_id = ?
         LEFT JOIN LATERAL (
           SELECT dead_lettered_at, resolution, resolved_at FROM dead_letters WHERE delivery_id = d.id ORDER BY id DESC LIMIT 1
         ) l ON true
        WHERE c.workspace_id = ? AND c.kind = 'consumer'
        ORDER BY c.id`,
    [messageId, workspaceId],
  );
  const faults = await db('consumer_fault_events')
    .where({ message_id: messageId })
    .whereIn(
      'consumer_id',
      rows.map((r) => r.consumer_id),
    )
    .orderBy('id')
    .select('consumer_id', 'kind', 'injected_at', 'detail_ms');
  return {
    message_id: accepted.message_id,
    message_type: accepted.message_type,
    correlation_id: accepted.correlation_id,
    producer_connection_id: accepted.producer_connection_id,
    accepted_at: accepted.accepted_at.toISOString(),
    kafka: { partition: accepted.kafka_partition, offset: String(accepted.kafka_offset) },
    deliveries: rows.map((row) =>
      deliveryTrace(
        row,
        faults.filter((f) => f.consumer_id === row.consumer_id).map((f) => ({ kind: f.kind, at: f.injected_at.toISOString(), detail_ms: f.detail_ms })),
      ),
    ),
  };
}

function deliveryTrace(row: DeliveryTraceRow, faults: InjectedFault[]): DeliveryTrace {
  const leaseRanOut = row.state === 'leased' && row.visible_at !== null && row.visible_at <= row.now;
  const deadLetter =
    row.dead_lettered_at === null
      ? null
      : { dead_lettered_at: row.dead_lettered_at.toISOString(), resolution: row.resolution, resolved_at: iso(row.resolved_at) };
  const state: DeliveryStateName =
    row.state === null
      ? 'not_enqueued'
      : deadLetter && deadLetter.resolution === null
        ? 'dead_lettered'
        : deadLetter?.resolution === 'discarded'
          ? 'discarded'
          : leaseRanOut
            ? 'queued'
            : row.state;
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
    dead_letter: deadLetter,
    faults,
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
