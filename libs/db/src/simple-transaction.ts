import type { Client, QueryResult } from 'pg';
import type { Knex } from 'knex';

/** One statement's rows, as node-postgres parsed them (the column types' own parsers). */
export type StatementRows = ReadonlyArray<Record<string, unknown>>;

/** The transaction's statements so far; see simpleTransaction. */
export interface SimpleTransaction {
  /**
   * Runs `statements` (no parameters: values are sqlLiteral-quoted) in one round trip and answers
   * each one's rows, in order. The first call also opens the transaction (BEGIN goes with it).
   */
  run(statements: readonly string[]): Promise<StatementRows[]>;
}

/** What the work of a simple transaction ends with: its result, and statements to send with the COMMIT. */
export interface SimpleTransactionEnd<T> {
  result: T;
  /** Sent in the COMMIT's round trip, before it; none: COMMIT alone. */
  beforeCommit?: readonly string[];
}

/**
 * A transaction on one connection of the pool whose statements go as simple queries, several per round
 * trip — for a hot path where round trips, not statements, are the cost (the gateway's group commit:
 * BEGIN with its locks and reads, then its writes with COMMIT). A failure of any statement, or of
 * `work`, rolls the transaction back; a connection that cannot even do that is discarded (knex's pool
 * drops a connection marked disposed), so no connection goes back to the pool inside a transaction.
 */
export async function simpleTransaction<T>(db: Knex, work: (tx: SimpleTransaction) => Promise<SimpleTransactionEnd<T>>): Promise<T> {
  const connection = (await db.client.acquireConnection()) as Client & { __knex__disposed?: unknown };
  let begun = false;
  const run = async (statements: readonly string[]): Promise<StatementRows[]> => {
    const prefix = begun ? [] : ['begin'];
    begun = true;
    const answer = (await connection.query([...prefix, ...statements].join(';\n'))) as QueryResult | QueryResult[];
    const results = Array.isArray(answer) ? answer : [answer];
    return results.slice(prefix.length).map((r) => r.rows);
  };
  try {
    const end = await work({ run });
    const last = [...(end.beforeCommit ?? [])];
    if (begun || last.length > 0) await run([...last, 'commit']);
    return end.result;
  } catch (err) {
    if (begun) {
      await connection.query('rollback').catch((rollbackFailed: unknown) => {
        connection.__knex__disposed = rollbackFailed;
      });
    }
    throw err;
  } finally {
    await db.client.releaseConnection(connection);
  }
}
