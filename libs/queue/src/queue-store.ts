import { DELIVERY_CHANNEL, inOneSnapshot, preparedQuery, preparedSimpleQuery, rawQuery, sqlLiteral, type Knex, type Row } from '@bus/db';
import { unavailableUnlessDone } from '@bus/http';
import { coalesceCalls, settleWithin } from '@bus/contracts';
import { ACK } from './sql/ack';
import { DEAD_LETTER_DUE } from './sql/dead-letter-due';
import { EXTEND } from './sql/extend';
import { IN_FLIGHT } from './sql/in-flight';
import { gateBindings } from './sql/gate';
import { leaseStatement } from './sql/lease';
import { LOCK_STORIES_OF_DELIVERIES } from './sql/lock-stories-of-deliveries';
import { peekStatement } from './sql/peek';
import { RECEIVE_FAULTS } from './sql/receive-faults';
import { releaseStatement } from './sql/release';
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
  /**
   * When nothing was receivable: when the consumer's next head becomes visible on a timer (a nack's
   * delay, a lease's end, a gate's delay), the latest a long poll waits before it reads again; null
   * when none waits on one, or when the receive found heads.
   */
  nextVisibleAt: Date | null;
}

/**
 * What a consumer connection's testing settings hold back from a receive (docs/testing-tools.md).
 * Without one the statements are exactly the plain ones.
 */
export interface ReceiveGate {
  /** A message received this many times is not handed out again (the dead-letter threshold); null: no limit. */
  receiveLimit: number | null;
  /** A message is receivable only this long after it was enqueued (the injected delivery delay); 0: none. */
  delayMs: number;
}

/** One receivable message as peek shows it: no lease, no receipt handle. */
export type PeekedMessage = Omit<LeasedMessage, 'generation' | 'traceparent'>;

/** One leased message as the message browser shows it: no receipt handle. */
export type InFlightMessage = PeekedMessage & { leaseEndsAt: Date };

export interface PeekFilter {
  messageType?: string;
  correlationId?: string;
}

/** A peek's answer; `truncated`: a message-type filter stopped at PEEK_FILTER_HEADS correlation ids short of `max`. */
export interface PeekAnswer {
  messages: PeekedMessage[];
  truncated: boolean;
}

export interface QueueStore {
  /**
   * Leases up to `max` receivable messages of `consumerId` for `visibilityMs` (invariant C): only the
   * oldest un-acked delivery of each correlation id is eligible, and a receive may take it with the
   * run of that correlation id's following deliveries, in order. A `gate` holds back what it names.
   */
  receive(consumerId: string, max: number, visibilityMs: number, gate?: ReceiveGate): Promise<ReceiveResult>;
  /**
   * Acks the leases still current; 'stale' for a lease another receive, a nack or an ack superseded.
   * Not done within SETTLE_TIMEOUT_MS: 503 queue.unavailable, though the ack may still take effect.
   */
  ack(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]>;
  /** Releases the leases still current after `delayMs`, and with each the leased run after it; bounded as `ack` is. */
  nack(consumerId: string, leases: LeaseRef[], delayMs: number): Promise<SettleOutcome[]>;
  /**
   * Sets each current lease to end `visibilityMs` from now (longer or shorter), the lease and its
   * receipt handle kept; 'stale' for a lease no longer current. Only the lease's own row changes: a
   * group stays blocked while its head is leased, so no later message of it comes out earlier.
   */
  extend(consumerId: string, leases: LeaseRef[], visibilityMs: number): Promise<SettleOutcome[]>;
}

/** The consumer tools' statements (peek, dead letters, fault injection); the plain receive and ack never run them. */
export interface ConsumerToolsStore {
  /**
   * Up to `max` messages a receive would lease now, in the order it would lease them (each receivable
   * head by id, followed by the run of its correlation id), optionally only of one message type or
   * correlation id (a message type over the oldest PEEK_FILTER_HEADS correlation ids only); leases and
   * receive counts untouched.
   */
  peek(consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekAnswer>;
  /**
   * The message browser's two lists, read in one snapshot: what an unfiltered peek under `gate` answers
   * (`max` at most) and up to `max` of the consumer's leased messages, each with when its lease ends.
   * A lease committing meanwhile shows a message in one list or the other, never in both.
   */
  browse(consumerId: string, max: number, gate?: ReceiveGate): Promise<{ waiting: PeekAnswer; inFlight: InFlightMessage[] }>;
  /**
   * Moves the receivable heads received `maxReceives` times or more (the oldest DEAD_LETTERS_PER_RECEIVE
   * of them) to the dead-letter list: each stays its correlation id's un-acked head, never visible, so
   * the messages after it wait. Resolves with how many moved.
   */
  deadLetterDue(consumerId: string, maxReceives: number): Promise<number>;
  /**
   * Lost acks: releases the current leases at once (with the leased run after each, as a nack does,
   * without counting a nack) so each comes back once more, recording a `duplicate` fault. A delivery
   * duplicated once already is not again: 'stale' for it, as for a lease no longer current.
   */
  loseAcks(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]>;
  /**
   * Records the faults of one receive's answer: the leases in `cut` end after `leaseMs` (early
   * expiry), the deliveries in `delayed` were held back `delayMs`. Resolves with the events recorded by kind.
   */
  recordReceiveFaults(consumerId: string, faults: { cut: LeaseRef[]; leaseMs: number; delayed: string[]; delayMs: number }): Promise<Record<FaultKind, number>>;
}

export type FaultKind = Row<'consumer_fault_events'>['kind'];

/**
 * How many heads per message asked for a receive considers: beyond the first `max`, so that receivers
 * running at once over groups of one message each still find heads the others have not locked. Receives
 * leasing together consider `max` more for each receive after the first.
 */
const RECEIVE_CANDIDATES = 4;

/** Most receives one statement leases for (receives of one consumer with the same options that waited together). */
const RECEIVES_TOGETHER = 8;

/** Most acks one statement settles for (acks of one consumer that waited together; each up to 10 handles). */
const ACKS_TOGETHER = 8;

/** One ack's leases: acks of one consumer may settle together. */
interface AckRequest {
  consumerId: string;
  leases: LeaseRef[];
}

/** One receive's options: receives with equal options may lease together. */
interface ReceiveRequest {
  consumerId: string;
  max: number;
  visibilityMs: number;
  gate?: ReceiveGate;
}

// The un-acked rows are found through deliveries_pending, whose predicate is `acked_at IS NULL` (migration
// 014: a lease then changes no indexed column and stays a HOT update); a query walking them says so.
// Rows named by id (a receive's heads and runs, an ack's handles) are filtered on `state` instead: with
// `acked_at IS NULL` the partial index would fit them too, and Postgres may then plan the lookup as a
// scan of deliveries_pending for the ids (not a leading column) instead of primary-key probes — it
// did, for generic plans made while the pending rows were few: 0.8–1 ms a lookup, an ack 7–11 ms
// (auto_explain, bench:e2e (c)).

/** A delivery with its message, as peek and receive read it. */
type MessageRow = Pick<Row<'deliveries'>, 'id' | 'message_id' | 'correlation_id' | 'receive_count'> &
  Pick<Row<'messages'>, 'message_type' | 'published_at' | 'body'>;

/** A row of the receive statement: a leased delivery with its message, or NULLs when nothing was leased. */
type LeasedRow = { heads: number; next_visible_at: Date | null } & (
  ({ answer: number } & MessageRow & Pick<Row<'deliveries'>, 'lease_generation'> & Pick<Row<'messages'>, 'traceparent'>) | { id: null }
);

function peekedMessage(r: MessageRow): PeekedMessage {
  return {
    deliveryId: String(r.id),
    messageId: r.message_id,
    messageType: r.message_type,
    correlationId: r.correlation_id,
    publishedAt: r.published_at,
    receiveCount: r.receive_count,
    body: r.body,
  };
}

/** The receipt handles' leases as the two arrays the settle statements unnest. */
function leaseArrays(leases: LeaseRef[]): { ids: string[]; generations: number[] } {
  return { ids: leases.map((l) => l.deliveryId), generations: leases.map((l) => l.generation) };
}

/** A delivery id as a literal's element: digits only (a receipt handle's id is; anything else names no row). */
function bigintText(id: string): string {
  return /^[0-9]{1,18}$/.test(id) ? id : '0';
}

/** A lease generation as a literal's element. */
function integerText(n: number): string {
  return Number.isSafeInteger(n) && n >= 0 && n <= 2_147_483_647 ? String(n) : '-1';
}

/** Per lease in the caller's order: done when `settled` says so the first time a (row, generation) is named, stale after. */
function outcomesInOrder(leases: LeaseRef[], settled: (lease: LeaseRef) => boolean): SettleOutcome[] {
  const answered = new Set<string>();
  return leases.map((lease) => {
    const key = `${lease.deliveryId}/${lease.generation}`;
    if (answered.has(key) || !settled(lease)) return 'stale';
    answered.add(key);
    return 'done';
  });
}

/** A Postgres failure of the queue is the consumer routes' 503 queue.unavailable, its cause Postgres's own error. */
export const queueCall = <T>(work: () => Promise<T>): Promise<T> => unavailableUnlessDone(work, (cause) => new QueueUnavailableError(cause));

/**
 * How long an ack or a nack waits for its statement (counted from the store call) before it answers
 * 503 queue.unavailable. Postgres' own bounds are longer (DATABASE_STATEMENT_TIMEOUT, 10 s, and a second
 * more for a server that does not answer at all), and a consumer must learn sooner that it should send
 * the call again. The statement is not cancelled, so it may still take effect (docs/delivery.md).
 */
export const SETTLE_TIMEOUT_MS = 5_000;

/** An ack or a nack given up at SETTLE_TIMEOUT_MS: the cause of its 503, for the log. */
export class SettleTimeoutError extends Error {
  override readonly name = 'SettleTimeoutError';
  constructor(what: 'ack' | 'nack', timeoutMs: number) {
    super(`the ${what} did not finish within ${timeoutMs} ms (waiting for Postgres); it may still take effect`);
  }
}

/** `settling` (already a queueCall), or 503 queue.unavailable at SETTLE_TIMEOUT_MS; its late outcome is dropped. */
function withinSettleTimeout<T>(what: 'ack' | 'nack', settling: Promise<T>): Promise<T> {
  return settleWithin(settling, SETTLE_TIMEOUT_MS, () => new QueueUnavailableError(new SettleTimeoutError(what, SETTLE_TIMEOUT_MS)));
}

export class KnexQueueStore implements QueueStore, ConsumerToolsStore {
  /**
   * Receives of one consumer with the same options that arrive while one of them is in Postgres wait
   * for it and then lease in one statement (each answer its own share): the statement's cost is its
   * walk of the consumer's heads, the same for one receive as for several (bench:e2e (c), 4 in flight).
   */
  private readonly receiveTogether = coalesceCalls(
    (r: ReceiveRequest) => JSON.stringify([r.consumerId, r.max, r.visibilityMs, r.gate ?? null]),
    (calls: ReceiveRequest[]) => queueCall(() => this.leaseReceivable(calls[0] as ReceiveRequest, calls.length)),
    RECEIVES_TOGETHER,
  );

  /**
   * Acks of one consumer that arrive while one of its acks is in Postgres wait for it and then go as one
   * statement (its handles in arrival order, each caller answered for its own), as receives do.
   */
  private readonly ackTogether = coalesceCalls(
    (a: AckRequest) => a.consumerId,
    async (calls: AckRequest[]) => {
      const outcomes = await queueCall(() =>
        this.settleAcks(
          (calls[0] as AckRequest).consumerId,
          calls.flatMap((c) => c.leases),
        ),
      );
      let at = 0;
      return calls.map((c) => outcomes.slice(at, (at += c.leases.length)));
    },
    ACKS_TOGETHER,
  );

  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexQueueStore {
    return new KnexQueueStore(db);
  }

  receive(consumerId: string, max: number, visibilityMs: number, gate?: ReceiveGate): Promise<ReceiveResult> {
    return this.receiveTogether({ consumerId, max, visibilityMs, gate });
  }

  /** Bounded from the call, so an ack waiting for another of its consumer's acks to finish is bounded too. */
  ack(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    return withinSettleTimeout('ack', this.ackTogether({ consumerId, leases }));
  }

  nack(consumerId: string, leases: LeaseRef[], delayMs: number): Promise<SettleOutcome[]> {
    return withinSettleTimeout(
      'nack',
      queueCall(() => this.release(consumerId, leases, delayMs, 'nack')),
    );
  }

  extend(consumerId: string, leases: LeaseRef[], visibilityMs: number): Promise<SettleOutcome[]> {
    return queueCall(() => this.extendLeases(consumerId, leases, visibilityMs));
  }

  peek(consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekAnswer> {
    return queueCall(() => peekReceivable(this.db, consumerId, max, filter, gate));
  }

  browse(consumerId: string, max: number, gate?: ReceiveGate): Promise<{ waiting: PeekAnswer; inFlight: InFlightMessage[] }> {
    return queueCall(() =>
      inOneSnapshot(this.db, async (tx) => ({
        waiting: await peekReceivable(tx, consumerId, max, {}, gate),
        inFlight: await leasedMessages(tx, consumerId, max),
      })),
    );
  }

  deadLetterDue(consumerId: string, maxReceives: number): Promise<number> {
    return queueCall(() => this.moveToDeadLetters(consumerId, maxReceives));
  }

  loseAcks(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    return withinSettleTimeout(
      'ack',
      queueCall(() => this.release(consumerId, leases, 0, 'lost_ack')),
    );
  }

  recordReceiveFaults(
    consumerId: string,
    faults: { cut: LeaseRef[]; leaseMs: number; delayed: string[]; delayMs: number },
  ): Promise<Record<FaultKind, number>> {
    return queueCall(() => this.writeReceiveFaults(consumerId, faults));
  }

  /**
   * The receive statement (sql/lease.ts: one round trip, its own transaction, prepared) for `callers`
   * receives waiting together, each answer its own share; a receive dealt nothing while heads were
   * found is `contended`, one that found none learns when the next head becomes visible.
   */
  private async leaseReceivable(request: ReceiveRequest, callers: number): Promise<ReceiveResult[]> {
    const { consumerId, max, visibilityMs, gate } = request;
    const candidates = max * (callers + RECEIVE_CANDIDATES - 1);
    const lease = leaseStatement(gate);
    const rows = await preparedQuery<LeasedRow>(this.db, lease.name, lease.text, { consumerId, callers, max, visibilityMs, candidates, ...gateBindings(gate) });
    const answers = Array.from({ length: callers }, (): LeasedMessage[] => []);
    for (const r of rows) {
      if (r.id !== null) answers[r.answer - 1]?.push({ ...peekedMessage(r), generation: r.lease_generation, traceparent: r.traceparent });
    }
    const headsFound = (rows[0]?.heads ?? 0) > 0;
    // NULL unless the statement found no head, and then every answer is empty.
    const nextVisibleAt = rows[0]?.next_visible_at ?? null;
    return answers.map((messages) => ({ messages, contended: messages.length === 0 && headsFound, nextVisibleAt }));
  }

  /**
   * The stories' locks (sql/lock-stories-of-deliveries.ts) and the ack (sql/ack.ts) as one simple query
   * of prepared statements: one implicit transaction, one round trip, the ack's snapshot taken after the
   * locks were granted. A handle named twice is done once, at its first place, as one ack at a time
   * would answer.
   */
  private async settleAcks(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    // Quoted literals: EXECUTE's arguments travel in the query's text.
    const ids = `'{${leases.map((l) => bigintText(l.deliveryId)).join(',')}}'`;
    const generations = `'{${leases.map((l) => integerText(l.generation)).join(',')}}'`;
    const consumer = sqlLiteral(consumerId);
    const [, ackedRows] = await preparedSimpleQuery(this.db, [
      { name: 'queue.ack.lock', sql: LOCK_STORIES_OF_DELIVERIES, literals: { consumerId: consumer, ids } },
      { name: 'queue.ack', sql: ACK, literals: { consumerId: consumer, ids, generations, channel: sqlLiteral(DELIVERY_CHANNEL) } },
    ]);
    const acked = (ackedRows ?? []) as Array<Pick<Row<'deliveries'>, 'id'> & { generation: number }>;
    return outcomesInOrder(leases, (lease) => acked.some((r) => String(r.id) === lease.deliveryId && r.generation === lease.generation));
  }

  /** A nack or a lost ack (sql/release.ts), one statement; consumers' long polls are woken when anything was released. */
  private async release(consumerId: string, leases: LeaseRef[], delayMs: number, mode: 'nack' | 'lost_ack'): Promise<SettleOutcome[]> {
    const release = releaseStatement(mode);
    const released = (
      await rawQuery<{ position: string | null }>(this.db, release.text, { consumerId, delayMs, channel: DELIVERY_CHANNEL, ...leaseArrays(leases) })
    ).rows;
    const donePositions = new Set(released.flatMap((r) => (r.position === null ? [] : [Number(r.position) - 1])));
    return leases.map((_, i) => (donePositions.has(i) ? 'done' : 'stale'));
  }

  private async extendLeases(consumerId: string, leases: LeaseRef[], visibilityMs: number): Promise<SettleOutcome[]> {
    const { rows } = await rawQuery<Pick<Row<'deliveries'>, 'id'> & { generation: number }>(this.db, EXTEND.text, {
      consumerId,
      visibilityMs,
      ...leaseArrays(leases),
    });
    return outcomesInOrder(leases, (lease) => rows.some((r) => String(r.id) === lease.deliveryId && r.generation === lease.generation));
  }

  /** The heads past the receive threshold become dead letters (sql/dead-letter-due.ts). */
  private async moveToDeadLetters(consumerId: string, maxReceives: number): Promise<number> {
    const moved = await rawQuery<never>(this.db, DEAD_LETTER_DUE.text, { consumerId, maxReceives });
    return moved.rowCount;
  }

  /** The Sandbox's faults of one receive (sql/receive-faults.ts). */
  private async writeReceiveFaults(
    consumerId: string,
    faults: { cut: LeaseRef[]; leaseMs: number; delayed: string[]; delayMs: number },
  ): Promise<Record<FaultKind, number>> {
    const { rows } = await rawQuery<Pick<Row<'consumer_fault_events'>, 'kind'>>(this.db, RECEIVE_FAULTS.text, {
      consumerId,
      leaseMs: faults.leaseMs,
      delayMs: faults.delayMs,
      delayed: faults.delayed,
      ...leaseArrays(faults.cut),
    });
    const counts: Record<FaultKind, number> = { duplicate: 0, delay: 0, early_expiry: 0 };
    for (const r of rows) counts[r.kind] += 1;
    return counts;
  }
}

/** Peek (sql/peek.ts): no lock and no change. */
async function peekReceivable(db: Knex | Knex.Transaction, consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekAnswer> {
  const peek = peekStatement(filter, gate);
  const { rows } = await rawQuery<MessageRow & { more_heads?: boolean }>(db, peek.text, { consumerId, max, ...filter, ...gateBindings(gate) });
  // A message-type peek answers one row of nulls when nothing matched.
  const messages = rows.filter((r) => r.id !== null).map(peekedMessage);
  return { messages, truncated: messages.length < max && rows[0]?.more_heads === true };
}

/** In flight (sql/in-flight.ts): no lock and no change. */
async function leasedMessages(db: Knex | Knex.Transaction, consumerId: string, max: number): Promise<InFlightMessage[]> {
  const { rows } = await rawQuery<MessageRow & { lease_ends_at: Date }>(db, IN_FLIGHT.text, { consumerId, max });
  return rows.map((r) => ({ ...peekedMessage(r), leaseEndsAt: r.lease_ends_at }));
}
