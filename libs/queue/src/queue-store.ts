import { DELIVERY_CHANNEL, preparedQuery, rawQuery, sqlLiteral, type Knex, type Row } from '@bus/db';
import { unavailableUnlessDone } from '@bus/http';
import { coalesceCalls, settleWithin } from '@bus/contracts';
import { storiesOfDeliveriesLock } from './story-lock';
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

export interface PeekFilter {
  messageType?: string;
  correlationId?: string;
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
  /** When the next queued delivery of `consumerId` becomes visible, if one waits on a timer (nack delay, lease, a gate's delay). */
  nextVisibleAt(consumerId: string, gate?: ReceiveGate): Promise<Date | null>;
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
   * correlation id; leases and receive counts untouched.
   */
  peek(consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekedMessage[]>;
  /**
   * Moves every receivable head received `maxReceives` times or more to the dead-letter list: it stays
   * its correlation id's un-acked head, never visible, so the messages after it wait. Resolves with
   * how many moved.
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

/** SQL conditions over a delivery (unqualified columns) that a gate adds to "receivable"; '' without one. */
function gateConditions(gate: ReceiveGate | undefined): string {
  if (!gate) return '';
  return [
    gate.receiveLimit === null ? '' : ` AND receive_count < :receiveLimit`,
    gate.delayMs > 0 ? ` AND enqueued_at <= now() - (:delayMs * interval '1 millisecond')` : '',
  ].join('');
}

/** The gate's variant of a prepared statement's name: each variant is its own text. */
function gateName(gate: ReceiveGate | undefined): string {
  if (!gate) return '';
  return `${gate.receiveLimit === null ? '' : '.limited'}${gate.delayMs > 0 ? '.delayed' : ''}`;
}

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

function gateBindings(gate: ReceiveGate | undefined): Record<string, number> {
  return gate ? { receiveLimit: gate.receiveLimit ?? 0, delayMs: gate.delayMs } : {};
}

/** A delivery with its message, as peek and receive read it. */
type MessageRow = Pick<Row<'deliveries'>, 'id' | 'message_id' | 'correlation_id' | 'receive_count'> &
  Pick<Row<'messages'>, 'message_type' | 'published_at' | 'body'>;

/** A row of the receive statement: a leased delivery with its message, or NULLs when nothing was leased. */
type LeasedRow = { heads: number } & (
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

/**
 * The CTEs `named` (each (row, generation) of leaseArrays once) and `locked` (the named rows still
 * leased, locked in id order) of a statement that changes leases by handle. Every statement that waits
 * for delivery rows locks them in id order (a nack: its groups' rows from the first named on), so two
 * never wait for each other: an UPDATE joined to the handles locks rows in the order its plan meets
 * them, which on a busy table is where their latest versions are stored, and deadlocked with a nack
 * (Postgres then fails one of them: a 503 to the consumer).
 */
const NAMED_LEASES_LOCKED = `named AS (
           SELECT DISTINCT id, generation FROM unnest(:ids::bigint[], :generations::int[]) AS n(id, generation)
         ),
         locked AS MATERIALIZED (
           SELECT id FROM deliveries WHERE id = ANY(ARRAY(SELECT id FROM named)) AND state = 'leased'
            ORDER BY id FOR UPDATE
         )`;

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

  nextVisibleAt(consumerId: string, gate?: ReceiveGate): Promise<Date | null> {
    return queueCall(() => this.nextVisible(consumerId, gate));
  }

  extend(consumerId: string, leases: LeaseRef[], visibilityMs: number): Promise<SettleOutcome[]> {
    return queueCall(() => this.extendLeases(consumerId, leases, visibilityMs));
  }

  peek(consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekedMessage[]> {
    return queueCall(() => this.peekReceivable(consumerId, max, filter, gate));
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
   * One statement (one round trip, its own transaction, prepared: see preparedQuery): the head of every
   * group — its oldest un-acked delivery; a group is receivable only when its head is. The oldest
   * receivable heads are the candidates, and from the snapshot their runs (each head's group in order
   * after it) tell how many heads fill `max` × `callers`: only that many are locked, in id order with SKIP LOCKED, so
   * concurrent receivers take the next free heads instead of each other's (the WHERE is re-checked on
   * the locked row version, so a head leased or acked meanwhile drops out). After each locked head the
   * run of its group in order, cut at the first row another transaction holds, so a run never has a
   * gap. The runs are dealt to the `callers` receives by (head, id) — earlier heads' runs first — each
   * receive's answer filled up to `max` (its last run cut there; the cut rest stays queued behind it) and
   * the next receive's answer starting at the next head, so a run is never split between two answers;
   * what is dealt is leased, with its messages. With nothing leased, one row of NULLs tells whether heads
   * were found (contended).
   */
  private async leaseReceivable(request: ReceiveRequest, callers: number): Promise<ReceiveResult[]> {
    const { consumerId, max, visibilityMs, gate } = request;
    const candidates = max * (callers + RECEIVE_CANDIDATES - 1);
    const gated = gateConditions(gate);
    const rows = await preparedQuery<LeasedRow>(
      this.db,
      `pull.receive.heads${gateName(gate)}`,
      // The candidates: the oldest receivable heads, `candidates` of them, so that concurrent receivers
      // of one-message runs still find free heads past each other's. Read from deliveries_heads (each
      // story's head marked, migration 020): oldest first, passing over the held heads (leased, delayed,
      // dead-lettered, or held back by the gate) one by one, so a receive reads the held heads before
      // the first free ones and `candidates` more, whatever the number of correlation ids.
      `WITH RECURSIVE candidates AS MATERIALIZED (
         SELECT id, correlation_id FROM deliveries
          WHERE consumer_id = :consumerId AND is_head AND visible_at <= now()${gated}
          ORDER BY id LIMIT :candidates
       ),
       -- How many heads to lock: the candidates' runs (by this snapshot) counted head after head, oldest
       -- first, until they fill max × callers rows — a probe per head counted, not per candidate.
       numbered AS MATERIALIZED (
         SELECT id, correlation_id, row_number() OVER (ORDER BY id) AS n FROM candidates
       ),
       sized (n, rows_so_far) AS (
         SELECT 0::bigint, 0::bigint
         UNION ALL
         SELECT c.n, s.rows_so_far + 1 + (
                  SELECT count(*) FROM (
                    SELECT 1 FROM deliveries
                     WHERE consumer_id = :consumerId AND correlation_id = c.correlation_id AND id > c.id AND acked_at IS NULL
                     ORDER BY id LIMIT :max - 1
                  ) run)
           FROM sized s JOIN numbered c ON c.n = s.n + 1
          WHERE s.rows_so_far < :max * :callers
       ),
       locked_heads AS MATERIALIZED (
         SELECT id, correlation_id FROM deliveries
          WHERE id = ANY(ARRAY(SELECT id FROM candidates)) AND state <> 'acked' AND is_head AND visible_at <= now()${gated}
          ORDER BY id LIMIT (SELECT count(*) - 1 FROM sized) FOR UPDATE SKIP LOCKED
       ),
       following AS MATERIALIZED (
         SELECT h.id AS head_id, f.id, f.rank
           FROM locked_heads h
          CROSS JOIN LATERAL (
            SELECT id, row_number() OVER (ORDER BY id) AS rank FROM deliveries
             WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id > h.id AND acked_at IS NULL
             ORDER BY id LIMIT :max - 1
          ) f
       ),
       following_locked AS MATERIALIZED (
         SELECT id FROM deliveries
          WHERE id = ANY(ARRAY(SELECT id FROM following)) AND state <> 'acked'${gated}
          ORDER BY id FOR UPDATE SKIP LOCKED
       ),
       runs AS (
         SELECT f.head_id, f.id, f.rank, count(l.id) OVER (PARTITION BY f.head_id ORDER BY f.rank) AS locked_so_far
           FROM following f LEFT JOIN following_locked l ON l.id = f.id
       ),
       locked_runs AS (
         SELECT id AS head_id, id, 0 AS rank FROM locked_heads
         UNION ALL
         SELECT head_id, id, rank FROM runs WHERE locked_so_far = rank
       ),
       run_lengths AS (
         SELECT head_id, count(*) AS length, row_number() OVER (ORDER BY head_id) AS n FROM locked_runs GROUP BY head_id
       ),
       -- The runs dealt in head order: a run goes to the current answer (cut at max) while it has room,
       -- else it starts the next answer; dealt = how many of the run's rows (the head's among them) go.
       dealt (n, head_id, answer, used, dealt) AS (
         SELECT n, head_id, 1, least(length, :max), least(length, :max) FROM run_lengths WHERE n = 1
         UNION ALL
         SELECT r.n, r.head_id, d.answer + CASE WHEN d.used >= :max THEN 1 ELSE 0 END,
                CASE WHEN d.used >= :max THEN least(r.length, :max) ELSE d.used + least(r.length, :max - d.used) END,
                CASE WHEN d.used >= :max THEN least(r.length, :max) ELSE least(r.length, :max - d.used) END
           FROM dealt d JOIN run_lengths r ON r.n = d.n + 1
       ),
       take AS (
         SELECT l.id, d.answer, row_number() OVER (ORDER BY l.head_id, l.id) AS position
           FROM locked_runs l JOIN dealt d ON d.head_id = l.head_id
          WHERE d.answer <= :callers AND l.rank < d.dealt
       ),
       leased AS (
         UPDATE deliveries d
            SET state = 'leased', visible_at = now() + (:visibilityMs * interval '1 millisecond'),
                lease_generation = d.lease_generation + 1, receive_count = d.receive_count + 1
           FROM messages m
          WHERE d.id IN (SELECT id FROM take) AND m.workspace_id = d.workspace_id AND m.message_id = d.message_id
         RETURNING d.id, d.lease_generation, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body, m.traceparent
       )
       SELECT found.heads, take.answer, leased.*
         FROM (SELECT count(*)::int AS heads FROM candidates) found
         LEFT JOIN (leased JOIN take USING (id)) ON true
        ORDER BY take.position`,
      { consumerId, callers, max, visibilityMs, candidates, ...gateBindings(gate) },
    );
    const answers = Array.from({ length: callers }, (): LeasedMessage[] => []);
    for (const r of rows) {
      if (r.id !== null) answers[r.answer - 1]?.push({ ...peekedMessage(r), generation: r.lease_generation, traceparent: r.traceparent });
    }
    const headsFound = (rows[0]?.heads ?? 0) > 0;
    return answers.map((messages) => ({ messages, contended: messages.length === 0 && headsFound }));
  }

  /**
   * One statement: a handle is current when its generation is the row's and the row is leased (an
   * expired lease nobody re-took still acks). The named rows are locked in id order first, so two
   * batches naming the same rows wait for each other instead of deadlocking. A handle named twice is
   * done once, at its first place, as one ack at a time would answer. An ack that makes a receivable
   * message the head of its correlation id NOTIFYs the consumer (at COMMIT), so a long poll parked
   * behind that correlation id's earlier message answers at once instead of at its wait's end. The
   * rows are found by id alone and the consumer checked on the row updated (its handles are the
   * consumer's: their MAC says so): with the consumer in the lookup, generic plans made on a young
   * table read all the consumer's rows of its message index and ANDed them with the ids (200 buffers).
   */
  private async settleAcks(consumerId: string, leases: LeaseRef[]): Promise<SettleOutcome[]> {
    // A simple query of two statements, one implicit transaction, one round trip (no parameters: the
    // values are quoted literals): the stories' locks, then the ack, whose snapshot is taken after they
    // were granted (story-lock.ts in libs/queue).
    const ids = `'{${leases.map((l) => bigintText(l.deliveryId)).join(',')}}'::bigint[]`;
    const generations = `'{${leases.map((l) => integerText(l.generation)).join(',')}}'::int[]`;
    const consumer = sqlLiteral(consumerId);
    const answers = (await rawQuery<unknown>(
      this.db,
      `${storiesOfDeliveriesLock(consumer, ids)};
       WITH named AS (
         SELECT DISTINCT id, generation FROM unnest(${ids}, ${generations}) AS n(id, generation)
       ),
       locked AS MATERIALIZED (
         SELECT id, is_head FROM deliveries WHERE id = ANY(ARRAY(SELECT id FROM named)) AND state = 'leased'
          ORDER BY id FOR UPDATE
       ),
       acked AS (
         UPDATE deliveries d SET state = 'acked', acked_at = now(), is_head = false
           FROM named n
          WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = ${consumer} AND d.lease_generation = n.generation AND d.state = 'leased'
         RETURNING d.id, n.generation, d.correlation_id
       ),
       -- Each correlation id whose head was acked gets its next head: its oldest row still un-acked
       -- once these acks commit (the snapshot has them all: the stories are locked).
       promoted AS (
         UPDATE deliveries d SET is_head = true
           FROM (SELECT DISTINCT a.correlation_id FROM acked a JOIN locked l ON l.id = a.id WHERE l.is_head) g
           CROSS JOIN LATERAL (
             SELECT id FROM deliveries
              WHERE consumer_id = ${consumer} AND correlation_id = g.correlation_id AND acked_at IS NULL AND id NOT IN (SELECT id FROM acked)
              ORDER BY id LIMIT 1
           ) h
          WHERE d.id = h.id
         RETURNING d.visible_at
       ),
       woken AS (SELECT pg_notify(${sqlLiteral(DELIVERY_CHANNEL)}, ${consumer}) WHERE EXISTS (SELECT 1 FROM promoted WHERE visible_at <= now()))
       SELECT id, generation, (SELECT count(*) FROM woken) AS woken FROM acked`,
    )) as unknown as Array<{ rows: Array<Pick<Row<'deliveries'>, 'id'> & { generation: number }> }>;
    const acked = answers[1]?.rows ?? [];
    return outcomesInOrder(leases, (lease) => acked.some((r) => String(r.id) === lease.deliveryId && r.generation === lease.generation));
  }

  /**
   * One statement, answering each handle as releasing them one at a time in the caller's order would
   * (invariant C): a current lease is released after `delayMs` with the leased run after it (released
   * at once; their handles stop working). A handle is therefore stale when an earlier handle of the
   * batch released it: the group's earlier-named current lease with a lower id. The rows from each
   * group's first named row on are locked in id order first (no deadlock between batches), and
   * consumers' long polls on every pull-api process are woken when anything was released.
   */
  private async release(consumerId: string, leases: LeaseRef[], delayMs: number, mode: 'nack' | 'lost_ack'): Promise<SettleOutcome[]> {
    // A lost ack (fault injection) releases like a nack but is no nack: not counted as one, at most
    // once per delivery, and recorded as a duplicate fault.
    const lostAck = mode === 'lost_ack';
    const released = (
      await rawQuery<{ position: string | null }>(
        this.db,
        `WITH named AS (
           SELECT id, generation, position FROM unnest(:ids::bigint[], :generations::int[]) WITH ORDINALITY AS n(id, generation, position)
         ),
         groups AS (
           SELECT d.correlation_id, min(d.id) AS from_id FROM deliveries d
            WHERE d.id = ANY(ARRAY(SELECT id FROM named)) AND d.consumer_id = :consumerId
            GROUP BY d.correlation_id
         ),
         locked AS MATERIALIZED (
           SELECT d.id, d.correlation_id, d.lease_generation FROM deliveries d JOIN groups g ON g.correlation_id = d.correlation_id
            WHERE d.consumer_id = :consumerId AND d.id >= g.from_id AND d.acked_at IS NULL AND d.state = 'leased'
            ORDER BY d.id FOR UPDATE OF d
         ),
         current AS (
           SELECT l.id, l.correlation_id, min(n.position) AS position
             FROM locked l JOIN named n ON n.id = l.id AND n.generation = l.lease_generation${
               lostAck ? `\n            WHERE NOT EXISTS (SELECT 1 FROM consumer_fault_events e WHERE e.delivery_id = l.id AND e.kind = 'duplicate')` : ''
             }
            GROUP BY l.id, l.correlation_id
         ),
         done AS (
           SELECT c.id, c.correlation_id, c.position FROM current c
            WHERE NOT EXISTS (SELECT 1 FROM current e WHERE e.correlation_id = c.correlation_id AND e.position < c.position AND e.id < c.id)
         ),
         run_from AS (SELECT correlation_id, min(id) AS from_id FROM done GROUP BY correlation_id),
         released AS (
           UPDATE deliveries d
              SET state = 'queued', lease_generation = d.lease_generation + 1,
                  visible_at = CASE WHEN d.id IN (SELECT id FROM done) THEN now() + (:delayMs * interval '1 millisecond') ELSE now() END${
                    lostAck
                      ? ''
                      : `,
                  nack_count = d.nack_count + CASE WHEN d.id IN (SELECT id FROM done) THEN 1 ELSE 0 END,
                  last_nacked_at = CASE WHEN d.id IN (SELECT id FROM done) THEN now() ELSE d.last_nacked_at END`
                  }
             FROM locked l JOIN run_from r ON r.correlation_id = l.correlation_id
            WHERE d.id = l.id AND l.id >= r.from_id
           RETURNING d.id
         ),${
           lostAck
             ? `
         faulted AS (
           INSERT INTO consumer_fault_events (consumer_id, delivery_id, message_id, kind)
           SELECT :consumerId, d.id, d.message_id, 'duplicate' FROM deliveries d WHERE d.id IN (SELECT id FROM done)
         ),`
             : ''
         }
         woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM released))
         SELECT done.position, (SELECT count(*) FROM woken) AS woken FROM (SELECT 1) one LEFT JOIN done ON true`,
        { consumerId, delayMs, channel: DELIVERY_CHANNEL, ...leaseArrays(leases) },
      )
    ).rows;
    const donePositions = new Set(released.flatMap((r) => (r.position === null ? [] : [Number(r.position) - 1])));
    return leases.map((_, i) => (donePositions.has(i) ? 'done' : 'stale'));
  }

  private async extendLeases(consumerId: string, leases: LeaseRef[], visibilityMs: number): Promise<SettleOutcome[]> {
    const { rows } = await rawQuery<Pick<Row<'deliveries'>, 'id'> & { generation: number }>(
      this.db,
      `WITH ${NAMED_LEASES_LOCKED}
       UPDATE deliveries d SET visible_at = now() + (:visibilityMs * interval '1 millisecond')
         FROM named n
        WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = :consumerId AND d.lease_generation = n.generation AND d.state = 'leased'
       RETURNING d.id, n.generation`,
      { consumerId, visibilityMs, ...leaseArrays(leases) },
    );
    return outcomesInOrder(leases, (lease) => rows.some((r) => String(r.id) === lease.deliveryId && r.generation === lease.generation));
  }

  /** A dead letter's visible_at is 'infinity': it never becomes visible, so it is no time to wait for. */
  private async nextVisible(consumerId: string, gate?: ReceiveGate): Promise<Date | null> {
    const visibleAt =
      gate && gate.delayMs > 0 ? this.db.raw(`greatest(visible_at, enqueued_at + (? * interval '1 millisecond'))`, [gate.delayMs]) : this.db.raw('visible_at');
    // Only a head's time counts: a later row is receivable only once it is its story's head.
    const row = await this.db('deliveries')
      .where({ consumer_id: consumerId, is_head: true })
      .where(visibleAt, '>', this.db.fn.now())
      .where('visible_at', '<', this.db.raw(`'infinity'`))
      .min({ at: visibleAt })
      .first();
    return row?.at ?? null;
  }

  /**
   * One statement, no lock and no change: the receivable heads (as the receive statement finds them)
   * by id, each followed by the un-acked rest of its correlation id, the first `max` in that order.
   * Filtered by message type, every receivable head is looked at (a receive's order is over all of them).
   */
  private async peekReceivable(consumerId: string, max: number, filter: PeekFilter, gate?: ReceiveGate): Promise<PeekedMessage[]> {
    const gated = gateConditions(gate);
    const { rows } = await rawQuery<MessageRow>(
      this.db,
      `WITH heads AS (
         SELECT id, correlation_id FROM deliveries
          WHERE consumer_id = :consumerId AND is_head AND visible_at <= now()${filter.correlationId === undefined ? '' : ' AND correlation_id = :correlationId'}${gated}
          ORDER BY id${filter.messageType === undefined ? ' LIMIT :max' : ''}
       ),
       runs AS (
         SELECT h.id AS head_id, f.id FROM heads h
          CROSS JOIN LATERAL (
            SELECT id FROM deliveries
             WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id >= h.id AND acked_at IS NULL
             ORDER BY id LIMIT :max
          ) f
       )
       SELECT d.id, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body
         FROM runs r
         JOIN deliveries d ON d.id = r.id
         JOIN messages m ON m.workspace_id = d.workspace_id AND m.message_id = d.message_id
        ${filter.messageType === undefined ? '' : 'WHERE m.message_type = :messageType'}
        ORDER BY r.head_id, r.id
        LIMIT :max`,
      { consumerId, max, ...filter, ...gateBindings(gate) },
    );
    return rows.map(peekedMessage);
  }

  /**
   * One statement: the receivable heads at the threshold, locked (SKIP LOCKED: a receive holding one
   * decides first), become dead letters — queued, visible_at 'infinity', a new lease generation so an
   * old receipt handle is stale — and each gets its dead_letters row.
   */
  private async moveToDeadLetters(consumerId: string, maxReceives: number): Promise<number> {
    const moved = await rawQuery<never>(
      this.db,
      `WITH due AS MATERIALIZED (
         SELECT id FROM deliveries
          WHERE consumer_id = :consumerId AND is_head AND visible_at <= now() AND receive_count >= :maxReceives
          ORDER BY id FOR UPDATE SKIP LOCKED
       ),
       moved AS (
         UPDATE deliveries d SET state = 'queued', visible_at = 'infinity', lease_generation = d.lease_generation + 1
           FROM due WHERE d.id = due.id
         RETURNING d.id, d.consumer_id, d.message_id, d.correlation_id, d.receive_count
       )
       INSERT INTO dead_letters (consumer_id, delivery_id, message_id, correlation_id, receive_count)
       SELECT consumer_id, id, message_id, correlation_id, receive_count FROM moved`,
      { consumerId, maxReceives },
    );
    return moved.rowCount;
  }

  /** One statement: cuts the leases still current and records both kinds of events. */
  private async writeReceiveFaults(
    consumerId: string,
    faults: { cut: LeaseRef[]; leaseMs: number; delayed: string[]; delayMs: number },
  ): Promise<Record<FaultKind, number>> {
    const { rows } = await rawQuery<Pick<Row<'consumer_fault_events'>, 'kind'>>(
      this.db,
      `WITH ${NAMED_LEASES_LOCKED},
       cut AS (
         UPDATE deliveries d SET visible_at = now() + (:leaseMs * interval '1 millisecond')
           FROM named n
          WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = :consumerId AND d.lease_generation = n.generation AND d.state = 'leased'
         RETURNING d.id, d.message_id
       )
       INSERT INTO consumer_fault_events (consumer_id, delivery_id, message_id, kind, detail_ms)
       SELECT :consumerId::text, id, message_id, 'early_expiry', :leaseMs::int FROM cut
       UNION ALL
       SELECT :consumerId::text, d.id, d.message_id, 'delay', :delayMs::int FROM deliveries d WHERE d.id = ANY(:delayed::bigint[]) AND d.consumer_id = :consumerId
       RETURNING kind`,
      { consumerId, leaseMs: faults.leaseMs, delayMs: faults.delayMs, delayed: faults.delayed, ...leaseArrays(faults.cut) },
    );
    const counts: Record<FaultKind, number> = { duplicate: 0, delay: 0, early_expiry: 0 };
    for (const r of rows) counts[r.kind] += 1;
    return counts;
  }
}
