import type { Knex } from 'knex';

/**
 * Runs `read` in one read-only repeatable-read transaction: every statement sees the same snapshot
 * (and the same now()). For an answer built from several statements that must agree with each other —
 * a list and its counts, a state and the rows that made it — while writers commit between them.
 */
export function inOneSnapshot<T>(db: Knex, read: (tx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(read, { isolationLevel: 'repeatable read', readOnly: true });
}
