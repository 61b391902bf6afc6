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
 * is derived from these fields, so a new table is one entry of libs/queue RETENTION_TABLES (and, in its own migration, the index on
 * `agesFrom` or `oldestFirstBy` — plus on `keptWhile`'s lookup — that keeps each batch off a table scan).
 */
export interface RetentionEntry {
  /** The table; also the `table` label of the bus_retention_* metrics. */
  readonly table: TableName;
  /** What a row is (docs/operations.md, "Retention"). */
  readonly what: string;
  /** Why it is kept that long. */
  readonly why: string;
  readonly window: RetentionWindow;
  /** SQL over alias `t`: the time a row's window counts from. An index on exactly this expression exists, unless `oldestFirstBy` is set. */
  readonly agesFrom: string;
  /**
   * A column whose order is the rows' order of age (a sequence assigned when `agesFrom` is set): each
   * batch reads the table's first `limit` rows along its index instead of the oldest along `agesFrom`,
   * which then needs no index of its own — one index entry fewer for every insert and update to write.
   */
  readonly oldestFirstBy?: string;
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

/**
 * SQL of the key of one consumer's lock of a delivery story (libs/queue lock-stories-of-deliveries.ts),
 * taken exclusive by a write of that consumer's rows alone while it holds the story's own lock shared.
 * Its prefix differs from deliveryStoryKey's, so no consumer's key is ever a story's key.
 */
export function deliveryConsumerStoryKey(workspaceId: string, correlationId: string, consumerId: string): string {
  return `'delivery-consumer:' || ${consumerId} || ':' || ${workspaceId} || '/' || ${correlationId}`;
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
    pick: `SELECT t.ctid::text AS ctid FROM ${entry.table} t WHERE ${oldestFirst(entry)}${pickable} ORDER BY ${ageOrder(entry)} LIMIT :limit FOR UPDATE OF t SKIP LOCKED`,
    remove: entry.onRemove
      ? `WITH removed AS (DELETE FROM ${entry.table} t WHERE t.ctid = ANY(:ctids::tid[]) AND ${due} RETURNING t.*),
         ${entry.onRemove}
         SELECT 1 FROM removed`
      : `DELETE FROM ${entry.table} t WHERE t.ctid = ANY(:ctids::tid[]) AND ${due}`,
  };
}

/** The order of `entry`'s rows by age: `oldestFirstBy` when it has one, else `agesFrom`. */
function ageOrder(entry: RetentionEntry): string {
  return entry.oldestFirstBy ? `t.${entry.oldestFirstBy}` : entry.agesFrom;
}

/** With `oldestFirstBy`, the condition (and AND) that keeps a batch to the table's first `:limit` rows. */
function oldestFirst(entry: RetentionEntry): string {
  const by = entry.oldestFirstBy;
  return by ? `t.${by} = ANY(ARRAY(SELECT o.${by} FROM ${entry.table} o ORDER BY o.${by} LIMIT :limit)) AND ` : '';
}

/**
 * When the oldest row of `entry` began to age (windows counted back from `cutoff`); null when there is
 * none. A table with rows that something keeps counts only the rows past their window that nothing
 * keeps — what the sweep has yet to remove — so the walk along its index stops at `cutoff` instead of
 * passing over every kept row (every stored message a delivery refers to).
 */
export async function oldestRowAt(db: Knex, entry: RetentionEntry, cutoff: Date): Promise<Date | null> {
  const { rows } = await rawQuery<{ aged_from: Date }>(
    db,
    `SELECT ${entry.agesFrom} AS aged_from FROM ${entry.table} t ${entry.keptWhile ? `WHERE ${entry.agesFrom} < :cutoff AND NOT ${entry.keptWhile}` : ''} ORDER BY ${ageOrder(entry)} LIMIT 1`,
    { cutoff },
  );
  return rows[0]?.aged_from ?? null;
}
