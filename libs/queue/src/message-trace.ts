import type { DeliveryStateName, DeliveryTrace, InjectedFault, MessageTrace } from '@bus/client';
import { rawQuery, type Knex, type Row } from '@bus/db';
import { MESSAGE_TRACE, TRACE_CONSUMERS_MAX } from './sql/message-trace';

/** Faults a trace shows of one copy at most: the latest. */
export const TRACE_FAULTS_MAX = 20;

/**
 * Where an accepted message is, for the tester's tools (docs/testing-tools.md, message trace): its
 * acceptance and each consumer connection's copy. Both the producer routes (gateway) and the
 * operator's admin API answer with this record, so the two can never describe a message differently.
 * It carries no message body. Its shape is the client library's (one declaration for the routes and
 * their callers).
 */

/** A consumer connection LEFT JOINed with its copy of the message and its latest dead letter: their columns null when there is none. */
type DeliveryTraceRow = { consumer_id: string; connection_status: string; now: Date } & {
  [C in 'state' | 'enqueued_at' | 'visible_at' | 'receive_count' | 'acked_at' | 'purged_at' | 'nack_count' | 'last_nacked_at']: Row<'deliveries'>[C] | null;
} & { [C in 'dead_lettered_at' | 'resolution' | 'resolved_at']: Row<'dead_letters'>[C] | null };

const iso = (at: Date | null): string | null => (at === null ? null : at.toISOString());

/** The trace of an accepted message of `workspaceId`, or undefined when the workspace accepted no such message_id. */
export async function readMessageTrace(db: Knex, workspaceId: string, messageId: string): Promise<MessageTrace | undefined> {
  const accepted = await db('accepted_messages')
    .where({ workspace_id: workspaceId, message_id: messageId })
    .first('message_id', 'message_type', 'correlation_id', 'producer_connection_id', 'accepted_at', 'kafka_partition', 'kafka_offset');
  if (!accepted) return undefined;
  const read = await rawQuery<DeliveryTraceRow>(db, MESSAGE_TRACE, [messageId, workspaceId]);
  const rows = read.rows.slice(0, TRACE_CONSUMERS_MAX);
  // The latest TRACE_FAULTS_MAX of each copy: a copy received again and again under fault injection
  // collects an event a receive.
  const faults = await db
    .from(
      db('consumer_fault_events')
        .where({ message_id: messageId })
        .whereIn(
          'consumer_id',
          rows.map((r) => r.consumer_id),
        )
        .select('id', 'consumer_id', 'kind', 'injected_at', 'detail_ms', db.raw('row_number() OVER (PARTITION BY consumer_id ORDER BY id DESC) AS newest'))
        .as('f'),
    )
    .where('newest', '<=', TRACE_FAULTS_MAX)
    .orderBy('id')
    .select<Array<Pick<Row<'consumer_fault_events'>, 'consumer_id' | 'kind' | 'injected_at' | 'detail_ms'>>>('consumer_id', 'kind', 'injected_at', 'detail_ms');
  return {
    message_id: accepted.message_id,
    message_type: accepted.message_type,
    correlation_id: accepted.correlation_id,
    producer_connection_id: accepted.producer_connection_id,
    accepted_at: accepted.accepted_at.toISOString(),
    kafka: { partition: accepted.kafka_partition, offset: String(accepted.kafka_offset) },
    deliveries_truncated: read.rows.length > TRACE_CONSUMERS_MAX,
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
          : row.purged_at !== null
            ? 'purged'
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
