import { Counter, type Registry } from 'prom-client';
import { METRICS } from '@bus/observability';
import type { Logger } from 'pino';
import type { RateLimitCount, RefusalRecord } from '@bus/db';
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
 * Recent refusals: the gateway's publish routes hand every refusal answer to `refused`,
 * which only queues it. A timer writes what queued in batches (libs/db writeRefusals), off the
 * request path; the queue is bounded, and a refusal that finds it full is dropped and counted, so a
 * flood of refusals or a slow Postgres never holds up or fails a publish.
 */
export interface RefusalRecorder {
  /** Queues the refusal; returns at once and never throws. */
  refused(event: RefusalEvent): void;
  /** Writes what is queued now; resolves when written (or the write failed, which is logged and counted). */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer and writes what is still queued. */
  stop(): Promise<void>;
}

export interface RefusalRecorderDeps {
  write(refusals: readonly RefusalRecord[], counts: readonly RateLimitCount[]): Promise<void>;
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
  const intervalMs = deps.intervalMs ?? 1_000;
  const batchSize = deps.batchSize ?? 200;
  const maxQueued = deps.maxQueued ?? 1_000;
  const maxQueuedBytes = deps.maxQueuedBytes ?? 16 * 1024 * 1024;
  const now = deps.now ?? (() => new Date());
  const outcomes = new Counter({
    ...METRICS.refusalsRecorded,
    help: 'Publish and validate refusals handed to the recent-refusals recorder, by what became of them (written; rate_limited: counted only; dropped_full: the queue was full; dropped_write_failed: Postgres refused the batch)',
    registers: [deps.metrics],
  });

  let queue: Queued[] = [];
  let queuedBytes = 0;
  let counts = new Map<string, RateLimitCount>();
  let writing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const count = (identity: ConnectionIdentity, rule: string, at: Date) => {
    const entry = counts.get(identity.clientId);
    if (!entry && counts.size >= MAX_COUNTED_CONNECTIONS) {
      outcomes.inc({ outcome: 'dropped_full' });
      return;
    }
    const next = entry ?? { connectionId: identity.clientId, rateLimited: 0, quotaExceeded: 0, lastRefusedAt: at };
    if (rule === 'quota.exceeded') next.quotaExceeded += 1;
    else next.rateLimited += 1;
    next.lastRefusedAt = at;
    counts.set(identity.clientId, next);
    outcomes.inc({ outcome: 'rate_limited' });
  };

  const writeBatch = async (): Promise<void> => {
    while (queue.length > 0 || counts.size > 0) {
      const batch = queue.slice(0, batchSize);
      queue = queue.slice(batch.length);
      queuedBytes -= batch.reduce((sum, q) => sum + (q.body?.length ?? 0), 0);
      const batchCounts = [...counts.values()];
      counts = new Map();
      try {
        await deps.write(await recordsOf(batch), batchCounts);
        outcomes.inc({ outcome: 'written' }, batch.length);
      } catch (err) {
        outcomes.inc({ outcome: 'dropped_write_failed' }, batch.length);
        deps.logger.warn({ err, refusals: batch.length, connections: batchCounts.length }, 'recent refusals could not be written; this batch is dropped');
        return;
      }
    }
  };

  const flush = (): Promise<void> => {
    // One write at a time; a flush asked for meanwhile waits for it and then writes what queued since.
    const previous = writing ?? Promise.resolve();
    const next = previous.then(writeBatch);
    writing = next.finally(() => {
      if (writing === next) writing = null;
    });
    return next;
  };

  return {
    refused({ identity, mode, body, error }) {
      try {
        if (!identity || identity.kind !== 'producer') return;
        const refusal = error instanceof HttpError ? error : new InternalError();
        const at = now();
        if (refusal.status === 429) {
          count(identity, refusal.rule, at);
          return;
        }
        const size = body?.length ?? 0;
        if (queue.length >= maxQueued || queuedBytes + size > maxQueuedBytes) {
          outcomes.inc({ outcome: 'dropped_full' });
          return;
        }
        const { violations, omitted } = boundViolations(refusal.violations(), STORED_VIOLATION_BOUNDS);
        queue.push({ identity, mode, body, status: refusal.status, violations, violationsOmitted: omitted + refusal.omittedViolations(), refusedAt: at });
        queuedBytes += size;
        if (queue.length >= batchSize) void flush();
      } catch (err) {
        // Never the publish's problem: the answer goes out whatever happens here.
        outcomes.inc({ outcome: 'dropped_full' });
        deps.logger.warn({ err }, 'a refusal could not be queued for the recent-refusals list');
      }
    },
    flush,
    start() {
      timer ??= setInterval(() => void flush(), intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
  };
}

/**
 * The records of a batch, one per turn of the event loop: reading a refused body's fields parses it
 * (~13 ms for 230 KB), and a batch of large bodies in one turn would hold every request meanwhile.
 */
async function recordsOf(batch: readonly Queued[]): Promise<RefusalRecord[]> {
  const records: RefusalRecord[] = [];
  for (const q of batch) {
    records.push(recordOf(q));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return records;
}

/** The record written for a queued refusal: the message's identifying fields read from the body, never the body. */
function recordOf(q: Queued): RefusalRecord {
  const fields = identifyingFields(q.body);
  return {
    workspaceId: q.identity.workspaceId,
    connectionId: q.identity.clientId,
    mode: q.mode,
    messageId: fields.message_id,
    messageType: fields.message_type,
    correlationId: fields.correlation_id,
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
