import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { IHeaders } from 'kafkajs';
import { Counter, Histogram, type Registry } from 'prom-client';
import { stringHeaders, type MessageHeaders } from '@bus/kafka';
import { METRICS, publishTraceContext, type ActivityRecorder, type Logger } from '@bus/observability';
import { REFUSAL_REASONS, type RefusalReason } from '@bus/contracts';
import {
  acceptanceKey,
  judgeAcceptance,
  readMessageHeaders,
  RecordValue,
  type Acceptance,
  type DeliveryStore,
  type MessageToEnqueue,
  type QuarantinedRecord,
} from '@bus/queue';

/** One record of bus.messages.v1 as kafkajs hands it over. */
export interface MessageRecord {
  topic: string;
  partition: number;
  offset: string;
  /** The Kafka key: `<workspace>/<correlation id>` for every record the gateway writes (messageKey). */
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
}

export interface RecordEnqueuerDeps {
  store: DeliveryStore;
  logger: Logger;
  metrics: Registry;
  /** How long to wait for the gateway's commit of a record's acceptance before quarantining it. */
  acceptanceWaitMs: number;
  /** The portal's per-minute activity: each delivery created, counted in memory. */
  activity: Pick<ActivityRecorder, 'delivered'>;
  /**
   * First re-check interval; doubles up to 500 ms. Short, because the usual case is the gateway's
   * commit a few milliseconds behind its Kafka ack (delivery often reads before it lands), and the
   * first wait is what a waiting long poll pays.
   */
  recheckMs?: number;
  /** How long a workspace this database did not have is taken as absent before it is looked up again. */
  unknownWorkspaceTtlMs?: number;
}

export type EnqueueOutcome = 'enqueued' | 'quarantined';

/** Handles one Kafka batch of one partition, in order; `heartbeat` keeps the group membership while it waits. */
export type BatchEnqueuer = (records: readonly MessageRecord[], heartbeat?: () => Promise<void>) => Promise<EnqueueOutcome[]>;

/** The warning logged for each record quarantined (stored); BusDeliveryQuarantineGrowing's runbook names it. */
export const QUARANTINE_LOG_MESSAGE = 'delivery quarantined a Kafka record (invariant A)';
/** The `reason` label values of bus_delivery_quarantined_total: the stored refusals and the only counted one. */
const QUARANTINE_REASONS: ReadonlyArray<RefusalReason | 'workspace.unknown'> = [...REFUSAL_REASONS, 'workspace.unknown'];

/** Workspaces looked up at most this often while absent; a workspace created later is then seen within it. */
const UNKNOWN_WORKSPACE_TTL_MS = 10_000;
/** Bound of each workspace cache: past it the cache starts over (a lookup is one query per batch). */
const WORKSPACE_CACHE_ENTRIES = 10_000;
const LONGEST_RECHECK_MS = 500;
/**
 * The re-check from which a record still without an acceptance has its value parsed (a value that is
 * not JSON is refused then): the fourth, ~60 ms after the first look with the default backoff
 * (4 + 8 + 16 + 32 ms), when a commit a few milliseconds behind its Kafka ack has long landed.
 */
const PARSE_FROM_ROUND = 4;

/** A record whose headers and value are readable, on its way to a verdict. */
interface Candidate {
  index: number;
  record: MessageRecord;
  headers: MessageHeaders;
  value: RecordValue;
  /** Records of one key keep their Kafka order: a record waiting for its acceptance holds back the later ones. */
  orderKey: string;
}

/**
 * Invariant A for a whole Kafka batch: a record is enqueued only when Postgres holds its acceptance
 * with the digest (or the content hash) of the record's own bytes (judgeAcceptance). Per batch: one
 * lookup of the workspaces not known yet, one query for every record's acceptance, and one write for
 * what is decided (one statement: messages, deliveries, one NOTIFY per consumer; in a transaction with
 * the quarantines when there are any). The gateway commits Postgres right after the Kafka ack, so an
 * acceptance may be in flight: only the records whose acceptance is missing are re-checked (one query
 * per round for all of them, backing off), up to `acceptanceWaitMs`, and then quarantined as
 * `acceptance.missing` (row, log line, counter; the automatic re-check, quarantine-recheck.ts, takes
 * them up). A waiting record holds back the later records of its correlation id (the Kafka key), never
 * the others, so FIFO per correlation id follows Kafka order. Unreadable headers or a hash mismatch
 * are quarantined without waiting, a value that is not JSON (and has no acceptance) at the first
 * re-check. A record of a workspace this database does not know is only counted. Each record has its
 * span, a child of its publish.
 */
export function createBatchEnqueuer(deps: RecordEnqueuerDeps): BatchEnqueuer {
  const quarantined = new Counter({
    ...METRICS.deliveryQuarantined,
    help: 'Kafka records delivery refused to enqueue (invariant A), by reason',
    registers: [deps.metrics],
  });
  // Every reason's series from the start, at 0: one that first appears at 1 has no increase() for
  // Prometheus, and BusDeliveryQuarantineGrowing would miss a pod's first quarantine of a reason.
  for (const reason of QUARANTINE_REASONS) quarantined.inc({ reason }, 0);
  const shared: EnqueuerShared = {
    deps,
    quarantined,
    enqueued: new Counter({
      ...METRICS.deliveryEnqueued,
      help: 'Deliveries created (one per consumer connection and message)',
      registers: [deps.metrics],
    }),
    lag: new Histogram({
      ...METRICS.deliveryLag,
      help: 'From the gateway accepting a message to its deliveries being committed',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [deps.metrics],
    }),
    recheckMs: deps.recheckMs ?? 4,
    workspaces: workspaceCache(deps.store, deps.unknownWorkspaceTtlMs ?? UNKNOWN_WORKSPACE_TTL_MS),
    tracer: trace.getTracer('@bus/delivery'),
  };
  return async (records, heartbeat) => new BatchEnqueue(shared, records).run(heartbeat);
}

/** What every batch of one enqueuer shares: its dependencies, metrics, workspace cache and tracer. */
interface EnqueuerShared {
  deps: RecordEnqueuerDeps;
  quarantined: Counter;
  enqueued: Counter;
  lag: Histogram;
  recheckMs: number;
  workspaces: ReturnType<typeof workspaceCache>;
  tracer: ReturnType<typeof trace.getTracer>;
}

/** Decisions made but not written yet: written together in one transaction by `flush`. */
interface Pending {
  enqueue: Array<{ index: number; message: MessageToEnqueue }>;
  quarantine: Array<{ index: number; reason: RefusalReason; row: QuarantinedRecord }>;
}

/** One Kafka batch on its way through createBatchEnqueuer: each record's outcome, span and acceptance. */
class BatchEnqueue {
  private readonly outcomes: EnqueueOutcome[] = [];
  private readonly headersOf: Array<MessageHeaders | null>;
  /**
   * One span per record, a child of the publish that produced it (the traceparent header), so a
   * trace runs publish → enqueue. Bounded attributes: never the body or the other headers.
   */
  private readonly spans: Span[];
  private pending: Pending = { enqueue: [], quarantine: [] };
  private readonly acceptances = new Map<string, Acceptance>();

  constructor(
    private readonly shared: EnqueuerShared,
    private readonly records: readonly MessageRecord[],
  ) {
    this.headersOf = records.map((record) => readMessageHeaders(record.headers));
    this.spans = records.map((record, i) => recordSpan(shared.tracer, record, this.headersOf[i] ?? null));
  }

  async run(heartbeat?: () => Promise<void>): Promise<EnqueueOutcome[]> {
    try {
      await this.decideWhenAccepted(await this.candidates(), heartbeat);
      return this.outcomes;
    } catch (err) {
      this.failUndecidedSpans(err);
      throw err;
    }
  }

  /**
   * The records that wait for their acceptance: unreadable headers and missing values are refused,
   * and records of a workspace this database does not have are only counted.
   */
  private async candidates(): Promise<Candidate[]> {
    const readable: Array<{ index: number; record: MessageRecord; headers: MessageHeaders }> = [];
    this.records.forEach((record, index) => {
      const headers = this.headersOf[index] ?? null;
      if (headers === null) this.refuse(index, record, null, 'headers.unreadable');
      else readable.push({ index, record, headers });
    });
    const known = await this.shared.workspaces.known(readable.map((r) => r.headers.workspace_id));
    const candidates: Candidate[] = [];
    for (const { index, record, headers } of readable) {
      if (!known.has(headers.workspace_id)) {
        // Another environment's (or a dropped test database's) record on a shared topic: no commit can
        // ever make it acceptable here. Counted, not stored, so a shared topic's history costs nothing.
        this.shared.quarantined.inc({ reason: 'workspace.unknown' });
        this.decide(index, 'quarantined', 'workspace.unknown');
        continue;
      }
      if (record.value === null) {
        this.refuse(index, record, headers, 'value.missing');
        continue;
      }
      const orderKey = record.key?.toString('utf8') ?? acceptanceKey({ workspaceId: headers.workspace_id, messageId: headers.message_id });
      candidates.push({ index, record, headers, value: new RecordValue(record.value), orderKey });
    }
    return candidates;
  }

  /** Looks acceptances up, and again for those still missing with a growing pause, until each record is decided or the wait is over. */
  private async decideWhenAccepted(candidates: Candidate[], heartbeat?: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + this.shared.deps.acceptanceWaitMs;
    let pause = this.shared.recheckMs;
    let undecided = candidates;
    await this.lookUp(undecided);
    for (let round = 0; ; round += 1) {
      const expired = Date.now() >= deadline;
      // A value that is not JSON can never be accepted: refused at a re-check, not after the whole
      // wait. Only a record still without an acceptance to vouch for its bytes is parsed for this,
      // and not while its gateway commit may just be behind its Kafka ack: its digest then settles
      // it at a re-check without a parse (parsing at the first look took 14 % of delivery's busy
      // time at 64 publishes in flight, at the first re-check a sixth of what it allocated).
      if (round >= PARSE_FROM_ROUND || expired) undecided = this.refuseUnparsable(undecided);
      undecided = this.judgeAcceptedOrExpired(undecided, expired);
      await this.flush();
      if (undecided.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
      pause = Math.min(pause * 2, LONGEST_RECHECK_MS);
      await heartbeat?.();
      await this.lookUp(undecided.filter((c) => this.acceptanceOf(c) === null));
    }
  }

  /** Refuses the records without an acceptance whose value is not JSON; returns the others. */
  private refuseUnparsable(undecided: readonly Candidate[]): Candidate[] {
    return undecided.filter((c) => {
      if (this.acceptanceOf(c) !== null || c.value.contentHash() !== null) return true;
      this.refuse(c.index, c.record, c.headers, 'value.unreadable');
      return false;
    });
  }

  /**
   * Judges each record that has its acceptance (every one once `expired`) and is not held back by an
   * earlier record of its key; returns those still waiting.
   */
  private judgeAcceptedOrExpired(undecided: readonly Candidate[], expired: boolean): Candidate[] {
    const waiting = new Set<string>();
    const still: Candidate[] = [];
    for (const c of undecided) {
      const acceptance = this.acceptanceOf(c);
      if (waiting.has(c.orderKey) || (acceptance === null && !expired)) {
        waiting.add(c.orderKey);
        still.push(c);
        continue;
      }
      const check = judgeAcceptance({ headers: c.headers, partition: c.record.partition, offset: c.record.offset }, c.value, acceptance);
      if (check.accepted) this.pending.enqueue.push({ index: c.index, message: check.message });
      else this.refuse(c.index, c.record, c.headers, check.reason);
    }
    return still;
  }

  private async lookUp(of: readonly Candidate[]): Promise<void> {
    const found = await this.shared.deps.store.acceptances(of.map((c) => ({ workspaceId: c.headers.workspace_id, messageId: c.headers.message_id })));
    for (const [key, acceptance] of found) this.acceptances.set(key, acceptance);
  }

  private acceptanceOf(c: Candidate): Acceptance | null {
    return this.acceptances.get(acceptanceKey({ workspaceId: c.headers.workspace_id, messageId: c.headers.message_id })) ?? null;
  }

  private refuse(index: number, record: MessageRecord, headers: MessageHeaders | null, reason: RefusalReason): void {
    this.pending.quarantine.push({ index, reason, row: quarantineRow(record, headers, reason) });
  }

  /** Writes the pending decisions in one transaction; the outcomes (metrics, logs, spans) count once it committed. */
  private async flush(): Promise<void> {
    if (this.pending.enqueue.length + this.pending.quarantine.length === 0) return;
    const written = this.pending;
    this.pending = { enqueue: [], quarantine: [] };
    const batch = { enqueue: written.enqueue.map((e) => e.message), quarantine: written.quarantine.map((q) => q.row) };
    const created = await this.shared.deps.store.write(batch);
    this.shared.enqueued.inc(created.length);
    this.shared.deps.activity.delivered(created);
    for (const { index, message } of written.enqueue) {
      // publishedAt is the gateway's acceptance time.
      this.shared.lag.observe(Math.max(0, (Date.now() - message.publishedAt.getTime()) / 1000));
      this.decide(index, 'enqueued');
    }
    for (const { index, reason, row } of written.quarantine) {
      this.shared.quarantined.inc({ reason });
      this.shared.deps.logger.warn(
        { topic: row.topic, partition: row.partition, offset: row.offset, workspace_id: row.workspaceId, message_id: row.messageId, reason },
        QUARANTINE_LOG_MESSAGE,
      );
      this.decide(index, 'quarantined', reason);
    }
  }

  private decide(index: number, outcome: EnqueueOutcome, reason?: RefusalReason | 'workspace.unknown'): void {
    this.outcomes[index] = outcome;
    const span = this.spans[index];
    if (reason !== undefined) span?.setAttribute('bus.quarantine.reason', reason);
    span?.setAttribute('bus.delivery.outcome', outcome);
    span?.end();
  }

  private failUndecidedSpans(err: unknown): void {
    for (const [index, span] of this.spans.entries()) {
      if (this.outcomes[index] !== undefined) continue;
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  }
}

function recordSpan(tracer: ReturnType<typeof trace.getTracer>, record: MessageRecord, headers: MessageHeaders | null): Span {
  return tracer.startSpan(
    'delivery enqueue',
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.name': 'process',
        'messaging.operation.type': 'process',
        'messaging.destination.name': record.topic,
        'messaging.destination.partition.id': String(record.partition),
        'messaging.kafka.offset': Number(record.offset),
        ...(headers ? { 'messaging.message.id': headers.message_id, 'bus.workspace_id': headers.workspace_id } : {}),
      },
    },
    publishTraceContext(headers?.traceparent ?? null),
  );
}

function quarantineRow(record: MessageRecord, headers: MessageHeaders | null, reason: RefusalReason): QuarantinedRecord {
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    workspaceId: headers?.workspace_id ?? null,
    messageId: headers?.message_id ?? null,
    reason,
    headers: stringHeaders(record.headers),
    value: record.value,
  };
}

/**
 * Which workspaces this database has, looked up once per batch for those not cached: a workspace that
 * exists stays known (workspaces are never deleted while the bus runs); an absent one is taken as
 * absent for `unknownTtlMs` only, so a workspace created after its id was first seen is not skipped for
 * long. Both caches are bounded.
 */
function workspaceCache(store: Pick<DeliveryStore, 'existingWorkspaces'>, unknownTtlMs: number) {
  const known = new Set<string>();
  const unknownUntil = new Map<string, number>();
  return {
    known: async (workspaceIds: readonly string[]): Promise<Set<string>> => {
      const now = Date.now();
      const toLookUp = [...new Set(workspaceIds)].filter((id) => !known.has(id) && (unknownUntil.get(id) ?? 0) <= now);
      const found = await store.existingWorkspaces(toLookUp);
      const answer = new Set(workspaceIds.filter((id) => known.has(id) || found.has(id)));
      for (const id of toLookUp) {
        if (found.has(id)) {
          if (known.size >= WORKSPACE_CACHE_ENTRIES) known.clear();
          known.add(id);
          unknownUntil.delete(id);
        } else {
          if (unknownUntil.size >= WORKSPACE_CACHE_ENTRIES) unknownUntil.clear();
          unknownUntil.set(id, now + unknownTtlMs);
        }
      }
      return answer;
    },
  };
}
