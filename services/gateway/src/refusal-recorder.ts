import { Counter, type Registry } from 'prom-client';
import { METRICS, SerialWrites } from '@bus/observability';
import type { Logger } from 'pino';
import type { AcceptedValidate, RateLimitCount, RefusalRecord } from '@bus/db';
import { boundViolations, type ViolationBounds } from '@bus/contracts';
import { HttpError, InternalError } from '@bus/http';
import type { ConnectionIdentity } from '@bus/identity';
import type { PublishMode } from './publish';

/** A publish or validate refusal, as the route's error handler sees it. */
export interface RefusalEvent {
  /** Set once authentication let the request through; a refusal before that names no producer connection and is not recorded. */
  identity: ConnectionIdentity | undefined;
  mode: PublishMode;
  /** The body as read, when it was read (not for a refusal before the body, nor a 413). */
  body: Buffer | undefined;
  error: unknown;
}

/**
 * Recent refusals, and validates accepted during a test run (docs/testing-tools.md#test-runs): the
 * gateway's publish routes hand every refusal answer to `refused` and every accepted validate to
 * `validated`, which only queue them (a validate only while its workspace has a run open). A timer
 * writes what queued in batches (libs/db writeRefusals), off the request path; the queue is bounded, and a refusal that finds it full is dropped and counted, so a
 * flood of refusals or a slow Postgres never holds up or fails a publish.
 */
export interface RefusalRecorder {
  /** Queues the refusal; returns at once and never throws. */
  refused(event: RefusalEvent): void;
  /** Queues an accepted validate if a run of its workspace is open; returns at once and never throws. */
  validated(event: { identity: ConnectionIdentity; body: Buffer }): void;
  /** Writes what is queued now; resolves when written (or the write failed, which is logged and counted). */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer and writes what is still queued. */
  stop(): Promise<void>;
}

export interface RefusalRecorderDeps {
  write(refusals: readonly RefusalRecord[], counts: readonly RateLimitCount[], validates: readonly AcceptedValidate[]): Promise<void>;
  /** Whether a run of the workspace is open at the time (cached: open-runs.ts). */
  openRunAt(workspaceId: string, at: Date): Promise<boolean>;
  logger: Logger;
  metrics: Registry;
  /** How often queued refusals are written (default 1 s); a batch of `batchSize` is written at once. */
  intervalMs?: number;
  batchSize?: number;
  /** Refusals queued at most (default 1,000) and body bytes held for them at most (default 16 MiB). */
  maxQueued?: number;
  maxQueuedBytes?: number;
  now?: () => Date;
}

interface Queued {
  /** An accepted validate (written under its runs) rather than a refusal. */
  accepted: boolean;
  identity: ConnectionIdentity;
  mode: PublishMode;
  body: Buffer | undefined;
  status: number;
  violations: RefusalRecord['violations'];
  violationsOmitted: number;
  refusedAt: Date;
}

/** The longest message_id, message_type or correlation_id kept; longer ones are cut (the schema allows 128 at most). */
const MAX_FIELD_CHARS = 128;
/** A stored refusal keeps its first few violations, short: enough to see what went wrong, and a page of 20 fits in 64 KB. */
const STORED_VIOLATION_BOUNDS: ViolationBounds = { maxCount: 5, maxChars: 200, maxBytes: 2600 };
/** Connections whose rate-limit counts wait at once; the counts of further ones are dropped (and counted) until the next write. */
const MAX_COUNTED_CONNECTIONS = 10_000;

export function createRefusalRecorder(deps: RefusalRecorderDeps): RefusalRecorder {
  return new QueuedRefusals(deps);
}

class QueuedRefusals implements RefusalRecorder {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxQueued: number;
  private readonly maxQueuedBytes: number;
  private readonly now: () => Date;
  private readonly outcomes: Counter;
  private queue: Queued[] = [];
  private queuedBytes = 0;
  private counts = new Map<string, RateLimitCount>();
  private readonly writes = new SerialWrites();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: RefusalRecorderDeps) {
    this.intervalMs = deps.intervalMs ?? 1_000;
    this.batchSize = deps.batchSize ?? 200;
    this.maxQueued = deps.maxQueued ?? 1_000;
    this.maxQueuedBytes = deps.maxQueuedBytes ?? 16 * 1024 * 1024;
    this.now = deps.now ?? (() => new Date());
    this.outcomes = new Counter({
      ...METRICS.refusalsRecorded,
      help: 'Publish and validate refusals handed to the recent-refusals recorder, by what became of them (written; rate_limited: counted only; dropped_full: the queue was full; dropped_write_failed: Postgres refused the batch)',
      registers: [deps.metrics],
    });
  }

  refused({ identity, mode, body, error }: RefusalEvent): void {
    try {
      if (!identity || identity.kind !== 'producer') return;
      const refusal = error instanceof HttpError ? error : new InternalError();
      if (refusal.status === 429) {
        this.countRateLimited(identity, refusal.rule, this.now());
        return;
      }
      const { violations, omitted } = boundViolations(refusal.violations(), STORED_VIOLATION_BOUNDS);
      this.enqueue({
        accepted: false,
        identity,
        mode,
        body,
        status: refusal.status,
        violations,
        violationsOmitted: omitted + refusal.omittedViolations(),
        refusedAt: this.now(),
      });
    } catch (err) {
      // Never the publish's problem: the answer goes out whatever happens here.
      this.outcomes.inc({ outcome: 'dropped_full' });
      this.deps.logger.warn({ err }, 'a refusal could not be queued for the recent-refusals list');
    }
  }

  validated({ identity, body }: { identity: ConnectionIdentity; body: Buffer }): void {
    const at = this.now();
    this.deps.openRunAt(identity.workspaceId, at).then(
      (open) => {
        if (open) this.enqueue({ accepted: true, identity, mode: 'validate', body, status: 202, violations: [], violationsOmitted: 0, refusedAt: at });
      },
      (err: unknown) => {
        this.outcomes.inc({ outcome: 'dropped_write_failed' });
        this.deps.logger.warn({ err }, "a workspace's open test runs could not be read; an accepted validate is not recorded");
      },
    );
  }

  flush(): Promise<void> {
    return this.writes.run(() => this.writeQueued());
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** A 429 is only counted per connection: a flood of them must not crowd the refusals list. */
  private countRateLimited(identity: ConnectionIdentity, rule: string, at: Date): void {
    const entry = this.counts.get(identity.clientId);
    if (!entry && this.counts.size >= MAX_COUNTED_CONNECTIONS) {
      this.outcomes.inc({ outcome: 'dropped_full' });
      return;
    }
    const next = entry ?? { connectionId: identity.clientId, rateLimited: 0, quotaExceeded: 0, lastRefusedAt: at };
    if (rule === 'quota.exceeded') next.quotaExceeded += 1;
    else next.rateLimited += 1;
    next.lastRefusedAt = at;
    this.counts.set(identity.clientId, next);
    this.outcomes.inc({ outcome: 'rate_limited' });
  }

  /** Queues one record to be written, unless the queue is full; a full batch is written at once. */
  private enqueue(q: Queued): void {
    const size = q.body?.length ?? 0;
    if (this.queue.length >= this.maxQueued || this.queuedBytes + size > this.maxQueuedBytes) {
      this.outcomes.inc({ outcome: 'dropped_full' });
      return;
    }
    this.queue.push(q);
    this.queuedBytes += size;
    if (this.queue.length >= this.batchSize) void this.flush();
  }

  /** Writes the queue and the counts in batches until both are empty, or drops the batch a write failed on. */
  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0 || this.counts.size > 0) {
      const batch = this.queue.slice(0, this.batchSize);
      this.queue = this.queue.slice(batch.length);
      this.queuedBytes -= batch.reduce((sum, q) => sum + (q.body?.length ?? 0), 0);
      const batchCounts = [...this.counts.values()];
      this.counts = new Map();
      try {
        const refusals = await recordsOf(
          batch.filter((q) => !q.accepted),
          recordOf,
        );
        await this.deps.write(
          refusals,
          batchCounts,
          await recordsOf(
            batch.filter((q) => q.accepted),
            acceptedOf,
          ),
        );
        this.outcomes.inc({ outcome: 'written' }, batch.length);
      } catch (err) {
        this.outcomes.inc({ outcome: 'dropped_write_failed' }, batch.length);
        this.deps.logger.warn({ err, refusals: batch.length, connections: batchCounts.length }, 'recent refusals could not be written; this batch is dropped');
        return;
      }
    }
  }
}

/**
 * The records of a batch, one per turn of the event loop: reading a body's fields parses it
 * (~13 ms for 230 KB), and a batch of large bodies in one turn would hold every request meanwhile.
 */
async function recordsOf<T>(batch: readonly Queued[], of: (q: Queued) => T): Promise<T[]> {
  const records: T[] = [];
  for (const q of batch) {
    records.push(of(q));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return records;
}

/** Who sent it and the message's identifying fields read from the body, never the body. */
function sentOf(q: Queued): Pick<RefusalRecord, 'workspaceId' | 'connectionId' | 'messageId' | 'messageType' | 'correlationId'> {
  const fields = identifyingFields(q.body);
  return {
    workspaceId: q.identity.workspaceId,
    connectionId: q.identity.clientId,
    messageId: fields.message_id,
    messageType: fields.message_type,
    correlationId: fields.correlation_id,
  };
}

/** The record written for an accepted validate. */
function acceptedOf(q: Queued): AcceptedValidate {
  return { ...sentOf(q), validatedAt: q.refusedAt };
}

/** The record written for a queued refusal: the message's identifying fields read from the body, never the body. */
function recordOf(q: Queued): RefusalRecord {
  return {
    ...sentOf(q),
    mode: q.mode,
    status: q.status,
    // A path or message can quote the sender's keys, and Postgres refuses a NUL in text and in jsonb.
    violations: q.violations.map((v) => ({
      source: v.source,
      rule: v.rule,
      message: storable(v.message),
      ...(v.path === undefined ? {} : { path: storable(v.path) }),
    })),
    violationsOmitted: q.violationsOmitted,
    refusedAt: q.refusedAt,
  };
}

/** `text` with each NUL replaced by U+FFFD, so Postgres can store it. */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

type IdentifyingFields = Record<'message_id' | 'message_type' | 'correlation_id', string | null>;

/**
 * message_id, message_type and correlation_id as the refused body carried them, where it is a JSON
 * object and they are strings; null otherwise. A NUL (which Postgres text cannot hold) becomes U+FFFD;
 * a very long value is cut.
 */
export function identifyingFields(body: Buffer | undefined): IdentifyingFields {
  const none: IdentifyingFields = { message_id: null, message_type: null, correlation_id: null };
  if (!body || body.length === 0) return none;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return none;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return none;
  const field = (name: keyof IdentifyingFields): string | null => {
    const value = (parsed as Record<string, unknown>)[name];
    if (typeof value !== 'string') return null;
    return storable(value.length > MAX_FIELD_CHARS ? value.slice(0, MAX_FIELD_CHARS) : value);
  };
  return { message_id: field('message_id'), message_type: field('message_type'), correlation_id: field('correlation_id') };
}
