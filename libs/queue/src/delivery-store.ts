import type { QueueStats } from '@bus/contracts';
import { arrayParameter, DELIVERY_CHANNEL, preparedQuery, rawQuery, type Knex, type Row, type Written } from '@bus/db';
import type { MessageHeaders } from '@bus/kafka';
import { ENQUEUE } from './sql/enqueue';
import { MARK_STORY_HEAD } from './sql/mark-story-head';
import { queueStatsStatement } from './sql/queue-stats';
import { REPLAY } from './sql/replay';
import { STORE_MESSAGES_ONCE } from './sql/store-messages';
import { lockStories } from './story-lock';

/** What Postgres recorded when the gateway accepted a message (accepted_messages). */
export interface Acceptance {
  contentHash: string;
  /** SHA-256 of the accepted bytes; null for rows accepted before migration 016. */
  bodySha256: Buffer | null;
  correlationId: string;
  messageType: string;
  acceptedAt: Date;
}

export interface MessageToEnqueue {
  workspaceId: string;
  messageId: string;
  body: Buffer;
  messageType: string;
  correlationId: string;
  publishedAt: Date;
  kafkaPartition: number;
  kafkaOffset: string;
  /** The publish's W3C trace context (the record's header), for the receive's span links. */
  traceparent: string | null;
}

/**
 * The message a Kafka record carries, as enqueue and replay store it: identity and trace context from
 * the record's headers, type, correlation id and publish time from the acceptance Postgres holds.
 */
export function acceptedMessage(
  record: { headers: MessageHeaders; body: Buffer; partition: number; offset: string },
  acceptance: Acceptance,
): MessageToEnqueue {
  return {
    workspaceId: record.headers.workspace_id,
    messageId: record.headers.message_id,
    body: record.body,
    messageType: acceptance.messageType,
    correlationId: acceptance.correlationId,
    publishedAt: acceptance.acceptedAt,
    kafkaPartition: record.partition,
    kafkaOffset: record.offset,
    traceparent: record.headers.traceparent,
  };
}

export interface QuarantinedRecord {
  topic: string;
  partition: number;
  offset: string;
  workspaceId: string | null;
  messageId: string | null;
  reason: string;
  headers: Record<string, string>;
  value: Buffer | null;
}

/** A row of quarantined_records, as a redrive reads it. */
export interface StoredQuarantinedRecord extends QuarantinedRecord {
  /** quarantined_records.id (bigserial, as a string). */
  id: string;
}

/** A message as accepted_messages keys it. */
export interface MessageKey {
  workspaceId: string;
  messageId: string;
}

/** What one Kafka batch (or one re-check round of it) writes, in one transaction. */
export interface BatchWrite {
  /** In Kafka order: deliveries get their FIFO ids in this order. */
  enqueue: MessageToEnqueue[];
  quarantine: QuarantinedRecord[];
}

export interface DeliveryStore {
  /** Which of `workspaceIds` this database has. */
  existingWorkspaces(workspaceIds: readonly string[]): Promise<Set<string>>;
  acceptance(workspaceId: string, messageId: string): Promise<Acceptance | null>;
  /** The acceptances Postgres holds for `keys`, in one query, by acceptanceKey. */
  acceptances(keys: readonly MessageKey[]): Promise<Map<string, Acceptance>>;
  /**
   * Atomically: stores each message once (one multi-row insert), one delivery per active
   * consumer connection of its workspace (one multi-row insert, idempotent on (consumer, message_id),
   * ids in the order of `enqueue`), one NOTIFY per consumer that got a new row, and the quarantined
   * records. Resolves with the consumer connection of each delivery created (one id per delivery).
   */
  write(batch: BatchWrite): Promise<string[]>;
  /** write() of one message: resolves with the consumers that got a new delivery. */
  enqueue(message: MessageToEnqueue): Promise<string[]>;
  quarantine(record: QuarantinedRecord): Promise<void>;
  /**
   * Quarantined records of `reason` whose age (by Postgres' clock) is in one of `ages` — each from
   * `fromMs` (inclusive) to `toMs` — oldest first, at most `limit`: the automatic re-check of
   * `acceptance.missing` (services/delivery quarantine-recheck.ts).
   */
  quarantinedAged(reason: string, ages: ReadonlyArray<{ fromMs: number; toMs: number }>, limit: number): Promise<StoredQuarantinedRecord[]>;
  quarantined(id: string): Promise<StoredQuarantinedRecord | undefined>;
  /**
   * Redrive: in one transaction, removes quarantined record `id` and enqueues `message` exactly as
   * enqueue does (idempotent on (consumer, message_id)). Resolves with the consumers that got a new
   * delivery, or null when the record was no longer quarantined (another redrive took it): then
   * nothing is enqueued by this call.
   */
  releaseQuarantined(id: string, message: MessageToEnqueue): Promise<string[] | null>;
  /**
   * Replay for one consumer connection: stores the message if needed and makes its delivery to
   * `consumerId` live again — a new one, or the acked one queued again (a live one is left alone, so
   * a replay never makes a second live copy). False when the consumer is not an active consumer
   * connection of the message's workspace or the delivery was live already.
   */
  replay(message: MessageToEnqueue, consumerId: string): Promise<boolean>;
  /**
   * Per consumer connection with un-acked deliveries (or only `consumerId`'s): depth, visible, in
   * flight (leased), delayed (a nack's delay), dead letters and the oldest enqueue time.
   */
  queueStats(consumerId?: string): Promise<QueueStats[]>;
}

export class KnexDeliveryStore implements DeliveryStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexDeliveryStore {
    return new KnexDeliveryStore(db);
  }

  async existingWorkspaces(workspaceIds: readonly string[]): Promise<Set<string>> {
    if (workspaceIds.length === 0) return new Set();
    return new Set(
      await this.db('workspaces')
        .whereIn('id', [...workspaceIds])
        .pluck('id'),
    );
  }

  async acceptance(workspaceId: string, messageId: string): Promise<Acceptance | null> {
    const row = await this.db('accepted_messages')
      .where({ workspace_id: workspaceId, message_id: messageId })
      .first('content_hash', 'body_sha256', 'correlation_id', 'message_type', 'accepted_at');
    return row ? acceptanceOf(row) : null;
  }

  async acceptances(keys: readonly MessageKey[]): Promise<Map<string, Acceptance>> {
    if (keys.length === 0) return new Map();
    // Prepared (as the enqueue statement): one text whatever the batch's size, planned once per connection.
    const rows = await preparedQuery<AcceptanceRow & Pick<Row<'accepted_messages'>, 'workspace_id' | 'message_id'>>(
      this.db,
      'delivery.acceptances',
      `SELECT a.workspace_id, a.message_id, a.content_hash, a.body_sha256, a.correlation_id, a.message_type, a.accepted_at
         FROM accepted_messages a
         JOIN unnest(:workspaceIds::text[], :messageIds::text[]) AS k(workspace_id, message_id) ON a.workspace_id = k.workspace_id AND a.message_id = k.message_id`,
      { workspaceIds: arrayParameter(keys.map((k) => k.workspaceId)), messageIds: arrayParameter(keys.map((k) => k.messageId)) },
    );
    return new Map(rows.map((r) => [acceptanceKey({ workspaceId: r.workspace_id, messageId: r.message_id }), acceptanceOf(r)]));
  }

  async write(batch: BatchWrite): Promise<string[]> {
    if (batch.enqueue.length === 0 && batch.quarantine.length === 0) return [];
    // A transaction even without quarantines: the enqueue holds its stories' locks (story-lock.ts) to
    // its COMMIT, and decides each new delivery's head marker in a statement after they were granted.
    return this.db.transaction(async (trx) => {
      const created = await enqueueIn(trx, batch.enqueue);
      if (batch.quarantine.length > 0)
        await trx('quarantined_records').insert(batch.quarantine.map(quarantineRow)).onConflict(['topic', 'kafka_partition', 'kafka_offset']).ignore();
      return created;
    });
  }

  enqueue(m: MessageToEnqueue): Promise<string[]> {
    return this.db.transaction((trx) => enqueueIn(trx, [m]));
  }

  async quarantine(r: QuarantinedRecord): Promise<void> {
    await this.db('quarantined_records').insert(quarantineRow(r)).onConflict(['topic', 'kafka_partition', 'kafka_offset']).ignore();
  }

  async quarantined(id: string): Promise<StoredQuarantinedRecord | undefined> {
    const row = await this.db('quarantined_records')
      .where({ id })
      .first(...QUARANTINE_COLUMNS);
    return row ? storedQuarantine(row) : undefined;
  }

  async quarantinedAged(reason: string, ages: ReadonlyArray<{ fromMs: number; toMs: number }>, limit: number): Promise<StoredQuarantinedRecord[]> {
    if (ages.length === 0) return [];
    const rows = await this.db('quarantined_records')
      .where({ reason })
      .where((any) => {
        for (const { fromMs, toMs } of ages) {
          // A block body: the builder is thenable, and knex wants the callback to build, not to return it.
          any.orWhere((band) => {
            band
              .whereRaw(`quarantined_at <= now() - (? * interval '1 millisecond')`, [fromMs])
              .whereRaw(`quarantined_at > now() - (? * interval '1 millisecond')`, [toMs]);
          });
        }
      })
      .orderBy('id')
      .limit(limit)
      .select(...QUARANTINE_COLUMNS);
    return rows.map(storedQuarantine);
  }

  releaseQuarantined(id: string, m: MessageToEnqueue): Promise<string[] | null> {
    return this.db.transaction(async (trx) => {
      // The row lock decides between concurrent redrives of one record: the second finds it gone.
      const removed = await trx('quarantined_records').where({ id }).delete();
      if (removed === 0) return null;
      return enqueueIn(trx, [m]);
    });
  }

  async queueStats(consumerId?: string): Promise<QueueStats[]> {
    const { rows } = await rawQuery<
      Pick<Row<'deliveries'>, 'consumer_id'> & { depth: number; visible: number; in_flight: number; delayed: number; dead_letters: number; oldest: Date }
    >(this.db, queueStatsStatement(consumerId !== undefined), consumerId === undefined ? [] : [consumerId]);
    return rows.map((r) => ({
      consumerId: r.consumer_id,
      depth: r.depth,
      visible: r.visible,
      inFlight: r.in_flight,
      delayed: r.delayed,
      deadLetters: r.dead_letters,
      oldestEnqueuedAt: r.oldest,
    }));
  }

  replay(m: MessageToEnqueue, consumerId: string): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      await lockStories(trx, [m]);
      await storeMessagesOnce(trx, [m]);
      const { rows } = await rawQuery<Pick<Row<'deliveries'>, 'consumer_id'>>(trx, REPLAY, [
        m.workspaceId,
        m.messageId,
        m.correlationId,
        consumerId,
        m.workspaceId,
      ]);
      if (rows.length === 0) return false;
      // The replayed delivery is a new one (the story's newest) or an acked one queued again, which may
      // be older than the story's head: either way the head is the story's oldest un-acked delivery.
      await markStoryHead(trx, consumerId, m.correlationId);
      await trx.raw('select pg_notify(?, ?)', [DELIVERY_CHANNEL, consumerId]);
      return true;
    });
  }
}

/** accepted_messages' key as the acceptances() map holds it (no workspace id or message id holds a NUL). */
export function acceptanceKey(key: MessageKey): string {
  return `${key.workspaceId}\u0000${key.messageId}`;
}

type AcceptanceRow = Pick<Row<'accepted_messages'>, 'content_hash' | 'body_sha256' | 'correlation_id' | 'message_type' | 'accepted_at'>;

function acceptanceOf(row: AcceptanceRow): Acceptance {
  return {
    contentHash: row.content_hash,
    bodySha256: row.body_sha256,
    correlationId: row.correlation_id,
    messageType: row.message_type,
    acceptedAt: row.accepted_at,
  };
}

const QUARANTINE_COLUMNS = ['id', 'topic', 'kafka_partition', 'kafka_offset', 'workspace_id', 'message_id', 'reason', 'headers', 'value'] as const;

type QuarantineRow = Pick<Row<'quarantined_records'>, (typeof QUARANTINE_COLUMNS)[number]>;

function quarantineRow(r: QuarantinedRecord): Written<'quarantined_records'> {
  return {
    topic: r.topic,
    kafka_partition: r.partition,
    kafka_offset: r.offset,
    workspace_id: r.workspaceId,
    message_id: r.messageId,
    reason: r.reason,
    headers: JSON.stringify(r.headers),
    value: r.value,
  };
}

function storedQuarantine(row: QuarantineRow): StoredQuarantinedRecord {
  return {
    id: String(row.id),
    topic: row.topic,
    partition: row.kafka_partition,
    offset: String(row.kafka_offset),
    workspaceId: row.workspace_id,
    messageId: row.message_id,
    reason: row.reason,
    headers: row.headers,
    value: row.value,
  };
}

/**
 * STORE_MESSAGES_ONCE's bindings: one array per column (arrayParameter's text: pg's own conversion of
 * ten arrays a message was an eighth of what delivery allocated), the bodies end to end with where
 * each starts (from 1) and its length.
 */
function messageArrays(messages: readonly MessageToEnqueue[]): Record<string, unknown> {
  const bodyStarts: number[] = [];
  let start = 1;
  for (const m of messages) {
    bodyStarts.push(start);
    start += m.body.length;
  }
  return {
    workspaceIds: arrayParameter(messages.map((m) => m.workspaceId)),
    messageIds: arrayParameter(messages.map((m) => m.messageId)),
    bodies: Buffer.concat(messages.map((m) => m.body)),
    bodyStarts: arrayParameter(bodyStarts),
    bodyLengths: arrayParameter(messages.map((m) => m.body.length)),
    messageTypes: arrayParameter(messages.map((m) => m.messageType)),
    correlationIds: arrayParameter(messages.map((m) => m.correlationId)),
    publishedAts: arrayParameter(messages.map((m) => m.publishedAt.toISOString())),
    kafkaPartitions: arrayParameter(messages.map((m) => m.kafkaPartition)),
    kafkaOffsets: arrayParameter(messages.map((m) => m.kafkaOffset)),
    traceparents: arrayParameter(messages.map((m) => m.traceparent)),
  };
}

/**
 * One statement: stores each message once and inserts one delivery per active consumer connection of
 * its workspace (idempotent on (consumer, message_id)), their ids — the FIFO sequence — in the order of
 * `messages`, then NOTIFYs each consumer that got a new row once, all under the stories' locks (which
 * is what keeps each delivery's stored message: docs/delivery.md). Resolves with the consumer of each
 * new delivery.
 */
async function enqueueIn(trx: Knex.Transaction, messages: readonly MessageToEnqueue[]): Promise<string[]> {
  if (messages.length === 0) return [];
  await lockStories(trx, messages);
  // Prepared: Postgres' parse and plan were half of this statement's time (its statement log, bench:e2e).
  const inserted = await preparedQuery<Pick<Row<'deliveries'>, 'consumer_id'>>(trx, 'delivery.enqueue.heads', ENQUEUE, {
    ...messageArrays(messages),
    channel: DELIVERY_CHANNEL,
  });
  return inserted.map((r) => r.consumer_id);
}

/**
 * Sets the head marker of consumer `consumerId`'s story `correlationId` on its oldest un-acked delivery
 * and on no other; the caller holds the story's lock. Writes only the rows whose marker changes.
 */
async function markStoryHead(trx: Knex.Transaction, consumerId: string, correlationId: string): Promise<void> {
  await rawQuery(trx, MARK_STORY_HEAD, { consumerId, correlationId });
}

/** STORE_MESSAGES_ONCE on its own (a replay stores its message, then its one delivery). */
async function storeMessagesOnce(trx: Knex.Transaction, messages: readonly MessageToEnqueue[]): Promise<void> {
  await preparedQuery(trx, 'delivery.store_messages', STORE_MESSAGES_ONCE, messageArrays(messages));
}
