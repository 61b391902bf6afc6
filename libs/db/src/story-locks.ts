import { sqlLiteral, sqlTextArray } from './sql-literals';

/**
 * The story lock of DESIGN §4 step 5, as a statement of a simple query: one transaction-scoped
 * advisory lock per `<workspace>/<correlation id>` (the Kafka key of the story's records), on
 * hashtextextended(key, 0). The gateway's group commit takes them exclusively from before its Kafka
 * send until its COMMIT; delivery takes them shared to wait for such a commit before it reads the
 * acceptances. Everyone takes them in one sorted order, so two transactions never wait for each other
 * in a cycle.
 */
export function storyLocksStatement(keys: readonly string[], mode: 'exclusive' | 'shared'): string {
  const sorted = [...new Set(keys)].sort();
  const lock = mode === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  return `select count(${lock}(hashtextextended(k, 0))) from unnest(${sqlTextArray(sorted)}) as k`;
}

/** lock_timeout for the rest of the transaction: a lock not granted within `ms` fails the statement (55P03). */
export function lockTimeoutStatement(ms: number): string {
  return `select set_config('lock_timeout', ${sqlLiteral(`${Math.max(1, Math.floor(ms))}ms`)}, true)`;
}

/** Postgres 55P03 (lock_not_available): a lock_timeout ran out. */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '55P03';
}
