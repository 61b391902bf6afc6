import knex, { type Knex } from 'knex';
import { migrationSource } from './migrations';

export type { Knex };

export interface DatabaseOptions {
  url: string;
  poolMax: number;
  /** Names the connections in pg_stat_activity. */
  applicationName: string;
  /**
   * How long opening a connection, or waiting for a free one of a full pool, may take before the
   * query fails (default 5 s): a stopped or unreachable Postgres is an error in bounded time, which
   * the routes answer with their 503.
   */
  connectTimeoutMs?: number;
  /**
   * Upper bound of one statement (default 10 s): Postgres cancels it (statement_timeout, which also
   * bounds lock waits), and the client gives up a second later should the server not answer at all.
   * 0 for none, e.g. for migrations.
   */
  statementTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
/** How much longer than the server's statement_timeout (and pg's connection timeout) the client waits. */
const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

export function createDatabase(opts: DatabaseOptions): Knex {
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const statementTimeoutMs = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return knex({
    client: 'pg',
    connection: {
      connectionString: opts.url,
      application_name: opts.applicationName,
      connectionTimeoutMillis: connectTimeoutMs,
      // A peer that vanished without closing the connection is noticed on an idle connection too.
      keepAlive: true,
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS } : {}),
    },
    pool: { min: 0, max: opts.poolMax },
    // A bit longer than the connection's own timeout, so a server that does not answer fails with pg's
    // error (which says so) rather than the pool's anonymous one; a full pool waits as long.
    acquireConnectionTimeout: connectTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
    // A failed query's error names the SQL with its placeholders, never the values bound to them:
    // those can be message bodies or secret hashes, and errors reach the logs.
    compileSqlOnError: false,
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

/** The options a process configured through DATABASE_* (libs/config databaseConfig). */
export function databaseOptionsOf(
  config: { DATABASE_URL: string; DATABASE_POOL_MAX: number; DATABASE_CONNECT_TIMEOUT: number; DATABASE_STATEMENT_TIMEOUT: number },
  applicationName: string,
): DatabaseOptions {
  return {
    url: config.DATABASE_URL,
    poolMax: config.DATABASE_POOL_MAX,
    applicationName,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT,
  };
}

export async function migrateLatest(db: Knex): Promise<string[]> {
  // knex types the migrator's answers as any: [batch number, names of the migrations run].
  const [, applied]: [number, string[]] = await db.migrate.latest();
  return applied;
}

/** Rolls every migration back; for tests and for operators tearing an environment down. */
export async function migrateDownAll(db: Knex): Promise<string[]> {
  const [, reverted]: [number, string[]] = await db.migrate.rollback(undefined, true);
  return reverted;
}

/** node-postgres' answer to one raw statement. */
export interface RawResult<R> {
  rows: R[];
  rowCount: number;
}

/**
 * Runs raw SQL (what knex's builder cannot say: CTEs, unnest batches, row locks over joins) and
 * answers its rows as the caller declares them. Knex cannot type raw SQL, so this is the one place
 * that trusts a declared shape: declare it with Row<…> picks, so a renamed column still fails tsc
 * wherever the rows are read.
 */
export async function rawQuery<R>(db: Knex | Knex.Transaction, sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Promise<RawResult<R>> {
  const result: RawResult<R> = await db.raw(sql, bindings);
  return result;
}

export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}

export function databaseReadiness(db: Knex) {
  return { name: 'postgres', check: () => pingDatabase(db) };
}
