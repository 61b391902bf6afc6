import { duration, int, optional, type ConfigOf, type VarReader } from '@bus/config';
import type { Knex } from 'knex';
import { rawQuery } from './database';
import type { TableName } from './tables';

const DAY_MS = 86_400_000;

/** How long rows of one kind are kept: an environment variable, its default and its floor. */
export interface RetentionWindow {
  /** The environment variable that sets it (a duration such as 7d). */
  readonly variable: string;
  /** When the variable is unset. */
  readonly defaultMs: number;
  /** When set, the default is this variable's value instead (never below `minimumMs`). */
  readonly defaultFrom?: 'KAFKA_MESSAGES_RETENTION';
  /** Start-up refuses a shorter window, naming the variable: the spec's minimum where it sets one. */
  readonly minimumMs: number;
}

/**
 * One kind of row the bus removes once it is older than its window. Everything the sweep does with it
 * is derived from these fields, so a new table is one entry (and, in its own migration, the index on
 * `agesFrom` — plus on `keptWhile`'s lookup — that keeps each batch off a table scan).
 */
export interface RetentionEntry {
  /** The table; also the `table` label of the bus_retention_* metrics. */
  readonly table: TableName;
  /** What a row is (docs/operations.md, "Retention"). */
  readonly what: string;
  /** Why it is kept that long. */
  readonly why: string;
  readonly window: RetentionWindow;
  /** SQL over alias `t`: the time a row's window counts from. An index on exactly this expression exists. */
  readonly agesFrom: string;
  /** SQL over `t` (`:cutoff` = now − window): a row past its window stays while this holds. */
  readonly keptWhile?: string;
  /**
   * SQL over `t`: the key (hashed as the writer hashes it) of the transaction-scoped advisory lock the
   * bus's writers of such a row hold. The sweep takes it without waiting and leaves the row to the
   * next sweep when a writer holds it, so it never removes a row a writer has read and relies on.
   */
  readonly writerLock?: string;
  /**
   * CTEs over `removed` (the batch's deleted rows, all columns) run in the delete's statement, after
   * the writer's locks of those rows were taken: what the writers keep about the rows that remain.
   */
  readonly onRemove?: string;
}

/**
 * SQL of the key of a delivery story's lock (libs/queue story-lock.ts), over expressions giving the
 * workspace id and the correlation id: hashed by hashtextextended(…, 0) as the sweep's writer locks
 * are. Apart from the gateway's key of the same story (`workspace/correlation`), so the two never
 * wait for each other.
 */
export function deliveryStoryKey(workspaceId: string, correlationId: string): string {
  return `'delivery:' || ${workspaceId} || '/' || ${correlationId}`;
}

/** Idempotency records: docs/api.md#limits says at least 7 days; by default the replay archive (docs/architecture.md#data-flow). */
export const IDEMPOTENCY_WINDOW = {
  variable: 'IDEMPOTENCY_RETENTION',
  defaultMs: 7 * DAY_MS,
  defaultFrom: 'KAFKA_MESSAGES_RETENTION',
  minimumMs: 7 * DAY_MS,
} as const satisfies RetentionWindow;

/** Consumer queues: docs/api.md#limits, 14 days. */
export const QUEUE_WINDOW = {
  variable: 'QUEUE_RETENTION',
  defaultMs: 14 * DAY_MS,
  minimumMs: 14 * DAY_MS,
} as const satisfies RetentionWindow;

/** Portal sessions and sign-ins in progress: dead after a day at most (PORTAL_SESSION_MAX_AGE ≤ 1d). */
export const PORTAL_SIGN_IN_WINDOW = {
  variable: 'PORTAL_SESSION_RETENTION',
  defaultMs: DAY_MS,
  minimumMs: DAY_MS,
} as const satisfies RetentionWindow;

/** Refusals, and the test runs whose reports list them: a tester's look back (docs/testing-tools.md). */
export const REFUSAL_WINDOW = {
  variable: 'REFUSAL_RETENTION',
  defaultMs: 7 * DAY_MS,
  minimumMs: DAY_MS,
} as const satisfies RetentionWindow;

/**
 * Every table the bus writes per message or per operator action, in sweep order (deliveries before the
 * messages they hold on to). Configuration tables (organisations … permissions, skill registrations)
 * are not here: they hold what operators configured, for as long as it is configured; signing keys
 * are removed by the token service once no token they signed can still be valid (docs/auth.md).
 */
export const RETENTION_TABLES = [
  {
    table: 'accepted_messages',
    what: 'idempotency records: message_id and content hash of every accepted message',
    why: 'a resent message_id answers 200 duplicate (or 409) for this long; docs/api.md#limits says at least 7 days. The default, the replay archive, means no archived message_id is accepted as new again, and a replay finds the acceptance of every archived message',
    window: IDEMPOTENCY_WINDOW,
    agesFrom: 't.accepted_at',
  },
  {
    table: 'story_state',
    what: 'sequence state of one correlation id (what telling/link step came last)',
    why: 'kept while any message of its correlation id is inside the idempotency window, so no message the bus still knows is judged against a forgotten story',
    window: IDEMPOTENCY_WINDOW,
    agesFrom: 't.updated_at',
    keptWhile: `EXISTS (SELECT 1 FROM accepted_messages a
                 WHERE a.workspace_id = t.workspace_id AND a.correlation_id = t.correlation_id AND a.accepted_at >= :cutoff)`,
    // The gateway's lock of one correlation id (services/gateway publish-store withStoryLocks).
    writerLock: `t.workspace_id || '/' || t.correlation_id`,
  },
  {
    table: 'consumer_fault_events',
    what: "faults injected into a consumer connection's deliveries (duplicate, delay, early lease expiry), listed in the message trace",
    why: 'as long as the queue keeps the delivery they happened to (docs/api.md#limits, 14 days): a consumer team can trace a fault for as long as the message is there; swept before the deliveries they refer to',
    window: QUEUE_WINDOW,
    agesFrom: 't.injected_at',
  },
  {
    table: 'dead_letters',
    what: 'messages dead-lettered after too many receives, open or redriven/discarded by the operator',
    why: 'the queue retention (docs/api.md#limits, 14 days): an open dead letter lives as long as its delivery could; a resolved one shows in the message trace as long',
    window: QUEUE_WINDOW,
    agesFrom: 't.dead_lettered_at',
  },
  {
    table: 'deliveries',
    what: "one consumer's copy of a message (queued, leased or acked)",
    why: 'docs/api.md#limits: a consumer queue keeps a message 14 days, received or not; an acked delivery stays as long, so a Kafka redelivery does not queue it again',
    window: QUEUE_WINDOW,
    agesFrom: 't.enqueued_at',
    // A removed un-acked head (a message nobody acked in the window) leaves its story's next un-acked
    // delivery the head: the story's lock is held, as every writer of the head marker holds it.
    writerLock: deliveryStoryKey('t.workspace_id', 't.correlation_id'),
    onRemove: `promoted AS (
      UPDATE deliveries d SET is_head = true
        FROM (SELECT DISTINCT consumer_id, correlation_id FROM removed WHERE is_head) s
        CROSS JOIN LATERAL (
          SELECT id FROM deliveries x
           WHERE x.consumer_id = s.consumer_id AND x.correlation_id = s.correlation_id AND x.acked_at IS NULL AND x.id NOT IN (SELECT id FROM removed)
           ORDER BY x.id LIMIT 1
        ) n
       WHERE d.id = n.id
      RETURNING d.id
    )`,
  },
  {
    table: 'messages',
    what: "the producer's exact bytes, stored once per message for the consumer queues",
    why: 'kept while a delivery refers to it',
    window: QUEUE_WINDOW,
    agesFrom: 't.stored_at',
    keptWhile: 'EXISTS (SELECT 1 FROM deliveries d WHERE d.workspace_id = t.workspace_id AND d.message_id = t.message_id)',
  },
  {
    table: 'quarantined_records',
    what: 'Kafka records delivery held back (invariant A), with their bytes, for inspection and redrive',
    why: 'time for an operator to act on the BusDeliveryQuarantineGrowing alert: inspect, redrive (docs/admin.md)',
    window: { variable: 'QUARANTINE_RETENTION', defaultMs: 7 * DAY_MS, minimumMs: DAY_MS },
    agesFrom: 't.quarantined_at',
  },
  {
    table: 'replay_jobs',
    what: 'replay requests and their outcome (finished, failed or interrupted)',
    why: 'the replays an operator can look up (docs/admin.md); a running job marks itself alive every 10 s, so only finished or interrupted ones age',
    window: { variable: 'REPLAY_JOB_RETENTION', defaultMs: 30 * DAY_MS, minimumMs: DAY_MS },
    agesFrom: 'coalesce(t.finished_at, t.heartbeat_at)',
  },
  {
    table: 'refusals',
    what: "publishes the gateway refused, with their violations and ids (no body): a producer's recent refusals",
    why: 'time for a tester to look up why a message was refused (GET /v1/tenants/{t}/refusals, docs/testing-tools.md); the newest 100 per connection are kept within it',
    window: REFUSAL_WINDOW,
    agesFrom: 't.refused_at',
  },
  {
    table: 'test_runs',
    what: "a tester's run: a label with a start and an end in a workspace, whose report is read from the refusals, acceptances and deliveries of that window",
    why: 'as long as the refusals its report lists (docs/testing-tools.md#test-runs); an open run ages from its planned end',
    window: REFUSAL_WINDOW,
    agesFrom: 't.ends_at',
  },
  {
    table: 'audit_log',
    what: 'changes made through the portal or the admin API: who, what, when, from where (never a secret)',
    why: "a year's review of who changed which credential or permission, with a month's margin; an organisation's admins and the operator read it (docs/portal.md)",
    window: { variable: 'AUDIT_RETENTION', defaultMs: 400 * DAY_MS, minimumMs: 90 * DAY_MS },
    agesFrom: 't.at',
  },
  {
    table: 'portal_sessions',
    what: "a signed-in person's session (hash of the cookie, grants, CSRF token, expiry)",
    why: 'no session outlives its absolute timeout (PORTAL_SESSION_MAX_AGE, at most 1 day): older rows are dead and only kept until the sweep',
    window: PORTAL_SIGN_IN_WINDOW,
    agesFrom: 't.created_at',
  },
  {
    table: 'portal_logins',
    what: 'a sign-in in progress (PKCE verifier and nonce of one OIDC state)',
    why: 'a sign-in is refused 10 minutes after it began: older rows are abandoned sign-ins',
    window: PORTAL_SIGN_IN_WINDOW,
    agesFrom: 't.created_at',
  },
] as const satisfies readonly RetentionEntry[];

export type RetentionVariable = (typeof RETENTION_TABLES)[number]['window']['variable'];

/** The distinct windows of the registry, in registry order. */
export const RETENTION_WINDOWS: readonly RetentionWindow[] = [...new Set<RetentionWindow>(RETENTION_TABLES.map((e) => e.window))];

function windowReaders(): { [V in RetentionVariable]: VarReader<number | undefined> } {
  const readers: Partial<Record<RetentionVariable, VarReader<number | undefined>>> = {};
  for (const w of RETENTION_WINDOWS) readers[w.variable as RetentionVariable] = optional(duration({ min: w.minimumMs }));
  return readers as { [V in RetentionVariable]: VarReader<number | undefined> };
}

/** The retention variables (read by the process that sweeps: delivery, or the all-in-one process). */
export const retentionConfig = {
  ...windowReaders(),
  /** How often the sweep runs. */
  RETENTION_SWEEP_INTERVAL: duration({ default: 60_000, min: 1_000, max: DAY_MS }),
  /** Rows one statement removes at most. */
  RETENTION_SWEEP_BATCH: int({ min: 1, max: 10_000, default: 1_000 }),
};

export interface RetentionSettings {
  /** Window of each variable, in ms. */
  windows: Readonly<Record<string, number>>;
  intervalMs: number;
  batchSize: number;
}

export function retentionSettings(config: ConfigOf<typeof retentionConfig> & { KAFKA_MESSAGES_RETENTION: number }): RetentionSettings {
  const windows: Record<string, number> = {};
  for (const w of RETENTION_WINDOWS) {
    const configured = config[w.variable as RetentionVariable];
    const fallback = w.defaultFrom === undefined ? w.defaultMs : Math.max(config[w.defaultFrom], w.minimumMs);
    windows[w.variable] = configured ?? fallback;
  }
  return { windows, intervalMs: config.RETENTION_SWEEP_INTERVAL, batchSize: config.RETENTION_SWEEP_BATCH };
}

/**
 * The sweep's lock: one advisory lock (the two-key form, a key space apart from the gateway's one-key
 * locks) that every batch takes without waiting, so one instance sweeps at a time and the others
 * find it taken and leave the work to it.
 */
export const SWEEP_LOCK = [0x62757372, 1] as const;
/** One batch statement's bound: a batch that cannot finish in it is cancelled, and the next sweep retries. */
export const BATCH_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * Removes at most `limit` rows of `entry` that aged past `cutoff`, oldest first, in one short
 * transaction (sweepStatements). Rows a concurrent transaction has locked, and rows whose writer's
 * lock is held, are left for the next batch: the sweep never waits on the bus's hot paths. Resolves
 * with the rows removed, or null when another instance holds the sweep lock.
 */
export function sweepBatch(db: Knex, entry: RetentionEntry, cutoff: Date, limit: number): Promise<number | null> {
  const statements = sweepStatements(entry);
  return db.transaction(async (trx) => {
    const lock = await rawQuery<{ held: boolean }>(trx, 'SELECT pg_try_advisory_xact_lock(?, ?) AS held', [...SWEEP_LOCK]);
    if (!lock.rows[0]?.held) return null;
    await trx.raw(`SET LOCAL statement_timeout = ${BATCH_STATEMENT_TIMEOUT_MS}`);
    const picked = await rawQuery<{ ctid: string }>(trx, statements.pick, { cutoff, limit });
    if (picked.rows.length === 0) return 0;
    const deleted = await rawQuery<never>(trx, statements.remove, { cutoff, ctids: picked.rows.map((r) => r.ctid) });
    return deleted.rowCount;
  });
}

/**
 * The two statements of one batch (named bindings :cutoff, :limit, :ctids). `pick` reads the oldest
 * due rows along `agesFrom`'s index and locks them, skipping rows another transaction holds; `remove`,
 * a new statement that sees what committed meanwhile, deletes those still due by their ctid.
 */
export function sweepStatements(entry: RetentionEntry): { pick: string; remove: string } {
  const due = `${entry.agesFrom} < :cutoff${entry.keptWhile ? ` AND NOT ${entry.keptWhile}` : ''}`;
  // The writer's lock is tried only for rows already found due (CASE fixes the order), so a live row
  // never delays its writer.
  const pickable = entry.writerLock
    ? `${entry.agesFrom} < :cutoff AND CASE WHEN ${due} THEN pg_try_advisory_xact_lock(hashtextextended(${entry.writerLock}, 0)) ELSE false END`
    : due;
  return {
    pick: `SELECT t.ctid::text AS ctid FROM ${entry.table} t WHERE ${pickable} ORDER BY ${entry.agesFrom} LIMIT :limit FOR UPDATE OF t SKIP LOCKED`,
    remove: entry.onRemove
      ? `WITH removed AS (DELETE FROM ${entry.table} t WHERE t.ctid = ANY(:ctids::tid[]) AND ${due} RETURNING t.*),
         ${entry.onRemove}
         SELECT 1 FROM removed`
      : `DELETE FROM ${entry.table} t WHERE t.ctid = ANY(:ctids::tid[]) AND ${due}`,
  };
}

/**
 * When the oldest row of `entry` that nothing keeps (with windows counted back from `cutoff`) began
 * to age; null when there is none. Walks `agesFrom`'s index from its oldest end.
 */
export async function oldestRowAt(db: Knex, entry: RetentionEntry, cutoff: Date): Promise<Date | null> {
  const { rows } = await rawQuery<{ aged_from: Date }>(
    db,
    `SELECT ${entry.agesFrom} AS aged_from FROM ${entry.table} t ${entry.keptWhile ? `WHERE NOT ${entry.keptWhile}` : ''} ORDER BY ${entry.agesFrom} LIMIT 1`,
    { cutoff },
  );
  return rows[0]?.aged_from ?? null;
}
