import { DELIVERY_CHANNEL, type Knex } from '@bus/db';
import { unavailableUnlessDone } from '@bus/http';
import { QueueUnavailableError } from './errors';

/** One leased delivery as a receive hands it out. */
export interface LeasedMessage {
  deliveryId: string;
  generation: number;
  messageId: string;
  messageType: string;
  correlationId: string;
  publishedAt: Date;
  receiveCount: number;
  /** The producer's exact bytes (invariant E). */
  body: Buffer;
  /** The publish's W3C trace context, when the publish was traced: the receive span links to it. */
  traceparent: string | null;
}

/** A lease named by a receipt handle. */
export interface LeaseRef {
  deliveryId: string;
  generation: number;
}

export type SettleOutcome = 'done' | 'stale';

export interface ReceiveResult {
  messages: LeasedMessage[];
  /**
   * Receivable heads were found but another receive held every one of them: they may be free again
   * in a moment (that receive rolled back) — read again rather than wait for a notification.
   */
  contended: boolean;
}

export interface QueueStore {
  /**
   * Leases up to `max` receivable messages of `consumerId` for `visibilityMs` (invariant C): only the
   * oldest un-acked delivery of each correlation id is eligible, and a receive may take it with the
   * run of that correlation id's following deliveries, in order.
   */
  receive(consumerId: string, max: number, visibilityMs: number): Promise<ReceiveResult>;
  /** Acks the leases still current; 'stale' for a lease another receive, a nack or an ack superseded. */
  ack(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]>;
  /** Releases the leases still current after `delayMs`, and with each the leased run after it. */
  nack(consumerId: string, leases: LeaseRef[], delayMs: number): Promise<SettleOutcome[]>;
  /** When the next queued delivery of `consumerId` becomes visible, if one waits on a timer (nack delay, lease). */
  nextVisibleAt(consumerId: string): Promise<Date | null>;
}

interface DeliveryRow {
  id: string;
  correlation_id: string;
}

/** A Postgres failure of the queue is the consumer routes' 503 queue.unavailable, its cause Postgres's own error. */
export const queueCall = <T>(work: () => Promise<T>): Promise<T> => unavailableUnlessDone(work, (cause) => new QueueUnavailableError(cause));

export class KnexQueueStore implements QueueStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexQueueStore {
    return new KnexQueueStore(db);
  }

  receive(consumerId: string, max: number, visibilityMs: number): Promise<ReceiveResult> {
    return queueCall(() => this.leaseReceivable(consumerId, max, visibilityMs));
  }

  ack(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    return queueCall(() => this.settleAcks(consumerId, leases));
  }

  nack(consumerId: string, leases: LeaseRef[], delayMs: number): Promise<SettleOutcome[]> {
    return queueCall(() => this.release(consumerId, leases, delayMs));
  }

  nextVisibleAt(consumerId: string): Promise<Date | null> {
    return queueCall(() => this.nextVisible(consumerId));
  }

  private leaseReceivable(consumerId: string, max: number, visibilityMs: number): Promise<ReceiveResult> {
    return this.db.transaction(async (trx): Promise<ReceiveResult> => {
      // The head of every group: its oldest un-acked delivery. A group is receivable only when its head is.
      const heads = (
        (await trx.raw(
          `SELECT id, correlation_id FROM (
             SELECT DISTINCT ON (correlation_id) id, correlation_id, visible_at
               FROM deliveries
              WHERE consumer_id = ? AND state <> 'acked'
              ORDER BY correlation_id, id
           ) h
           WHERE visible_at <= now()
           ORDER BY id
           LIMIT ?`,
          [consumerId, max],
        )) as { rows: DeliveryRow[] }
      ).rows;
      if (heads.length === 0) return { messages: [], contended: false };
      // Concurrent receivers skip each other's heads instead of waiting; the WHERE is re-checked on the
      // locked row version, so a head leased or acked meanwhile drops out.
      const locked = (
        (await trx.raw(
          `SELECT id FROM deliveries WHERE id = ANY(?::bigint[]) AND state <> 'acked' AND visible_at <= now()
           ORDER BY id FOR UPDATE SKIP LOCKED`,
          [heads.map((h) => h.id)],
        )) as { rows: Array<{ id: string }> }
      ).rows.map((r) => String(r.id));
      const lockedSet = new Set(locked);

      const take: string[] = [];
      for (const head of heads) {
        if (take.length >= max) break;
        if (!lockedSet.has(String(head.id))) continue;
        take.push(String(head.id));
        const room = max - take.length;
        if (room === 0) break;
        // The run after the head, in order; it stops at the first row another transaction holds, so
        // a run never has a gap.
        const following = (
          (await trx.raw(
            `SELECT id FROM deliveries WHERE consumer_id = ? AND correlation_id = ? AND id > ? AND state <> 'acked' ORDER BY id LIMIT ?`,
            [consumerId, head.correlation_id, head.id, room],
          )) as { rows: Array<{ id: string }> }
        ).rows.map((r) => String(r.id));
        if (following.length === 0) continue;
        const got = new Set(
          (
            (await trx.raw(`SELECT id FROM deliveries WHERE id = ANY(?::bigint[]) AND state <> 'acked' FOR UPDATE SKIP LOCKED`, [following])) as {
              rows: Array<{ id: string }>;
            }
          ).rows.map((r) => String(r.id)),
        );
        for (const id of following) {
          if (!got.has(id)) break;
          take.push(id);
        }
      }
      if (take.length === 0) return { messages: [], contended: heads.length > 0 };
      const leased = (
        (await trx.raw(
          `UPDATE deliveries d
              SET state = 'leased', visible_at = now() + (? * interval '1 millisecond'),
                  lease_generation = d.lease_generation + 1, receive_count = d.receive_count + 1
             FROM messages m
            WHERE d.id = ANY(?::bigint[]) AND m.workspace_id = d.workspace_id AND m.message_id = d.message_id
           RETURNING d.id, d.lease_generation, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body, m.traceparent`,
          [visibilityMs, take],
        )) as {
          rows: Array<{
            id: string;
            lease_generation: number;
            message_id: string;
            correlation_id: string;
            receive_count: number;
            message_type: string;
            published_at: Date;
            body: Buffer;
            traceparent: string | null;
          }>;
        }
      ).rows;
      const byId = new Map(leased.map((r) => [String(r.id), r]));
      const messages = take.flatMap((id) => {
        const r = byId.get(id);
        return r
          ? [
              {
                deliveryId: id,
                generation: r.lease_generation,
                messageId: r.message_id,
                messageType: r.message_type,
                correlationId: r.correlation_id,
                publishedAt: r.published_at,
                receiveCount: r.receive_count,
                body: r.body,
                traceparent: r.traceparent,
              },
            ]
          : [];
      });
      return { messages, contended: false };
    });
  }

  private async settleAcks(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    const outcomes: SettleOutcome[] = [];
    // One short statement per handle, in the caller's order; a handle is current when its
    // generation is the row's and the row is not acked yet (an expired lease nobody re-took still acks).
    for (const lease of leases) {
      const n = await this.db('deliveries')
        .where({ id: lease.deliveryId, consumer_id: consumerId, lease_generation: lease.generation, state: 'leased' })
        .update({ state: 'acked', acked_at: this.db.fn.now() });
      outcomes.push(n === 1 ? 'done' : 'stale');
    }
    return outcomes;
  }

  private async release(consumerId: string, leases: LeaseRef[], delayMs: number): Promise<SettleOutcome[]> {
    const outcomes: SettleOutcome[] = [];
    for (const lease of leases) {
      const done = await this.db.transaction(async (trx) => {
        const released = (
          (await trx.raw(
            `UPDATE deliveries SET state = 'queued', visible_at = now() + (? * interval '1 millisecond'), lease_generation = lease_generation + 1,
                    nack_count = nack_count + 1, last_nacked_at = now()
              WHERE id = ? AND consumer_id = ? AND lease_generation = ? AND state = 'leased'
              RETURNING correlation_id`,
            [delayMs, lease.deliveryId, consumerId, lease.generation],
          )) as { rows: Array<{ correlation_id: string }> }
        ).rows[0];
        if (!released) return false;
        // Invariant C: releasing one releases the leased run after it (their handles stop working).
        await trx.raw(
          `UPDATE deliveries SET state = 'queued', visible_at = now(), lease_generation = lease_generation + 1
            WHERE consumer_id = ? AND correlation_id = ? AND id > ? AND state = 'leased'`,
          [consumerId, released.correlation_id, lease.deliveryId],
        );
        // Wakes long polls (on every pull-api process) to re-read the queue and its next visible time.
        await trx.raw('select pg_notify(?, ?)', [DELIVERY_CHANNEL, consumerId]);
        return true;
      });
      outcomes.push(done ? 'done' : 'stale');
    }
    return outcomes;
  }

  private async nextVisible(consumerId: string): Promise<Date | null> {
    const row = (await this.db('deliveries')
      .where({ consumer_id: consumerId })
      .whereNot({ state: 'acked' })
      .where('visible_at', '>', this.db.fn.now())
      .min({ at: 'visible_at' })
      .first()) as { at: Date | null } | undefined;
    return row?.at ?? null;
  }
}
