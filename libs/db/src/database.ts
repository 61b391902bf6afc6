import knex, { type Knex } from 'knex';
import { createLogger, type Logger } from '@bus/observability';
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
  /**
   * The process's logger, where knex's own warnings go as JSON lines (knexLog). Without one, a logger
   * of its own named after `applicationName` at LOG_LEVEL (info): never knex's plain text.
   */
  logger?: Logger;
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
    log: knexLog(opts.logger ?? createLogger({ service: opts.applicationName, level: process.env.LOG_LEVEL ?? 'info' }), opts.url),
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

/** knex's prefix of a failed pool acquire, which it writes as a warning with the error's stack. */
const ACQUIRE_ERROR = 'Acquire connection error: ';

/**
 * knex's own log (warn, error, deprecate, debug), which it otherwise writes to stdout as plain text
 * over several lines, as the process's JSON lines: `msg` "knex: " and the message's first line, the
 * rest (a stack) in `detail`, credentials of a connection string redacted. A failed acquire is
 * debug: its error also fails the query that asked, whose caller logs it once (a refused request's
 * "dependency unavailable" line carries it as `err.cause`; background work logs its own warning), so
 * at warn it would double every refused request's line during a Postgres outage.
 */
export function knexLog(logger: Logger, url?: string): NonNullable<Knex.Config['log']> {
  const password = url === undefined ? '' : passwordOf(url);
  const write = (level: 'debug' | 'warn' | 'error', message: unknown) => {
    const text = redactCredentials(typeof message === 'string' ? message : String(message), password);
    const [first = '', ...rest] = text.split('\n');
    logger[text.startsWith(ACQUIRE_ERROR) ? 'debug' : level](rest.length > 0 ? { detail: rest.join('\n') } : {}, `knex: ${first}`);
  };
  return {
    debug: (message) => write('debug', message),
    warn: (message) => write('warn', message),
    error: (message) => write('error', message),
    deprecate: (message) => write('warn', message),
  };
}

/** A connection string's password, as written in it (percent-decoded); '' when it has none or is not a URL. */
function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** Shortest password replaced wherever it appears: a shorter one would also hit ordinary words. */
const MIN_PASSWORD_SCRUBBED = 6;

/** Text without the credentials a connection string or a libpq keyword string could carry. */
function redactCredentials(text: string, password: string): string {
  const scrubbed = password.length >= MIN_PASSWORD_SCRUBBED ? text.split(password).join('[redacted]') : text;
  // Up to the last @ of the URL: a password may carry an @ that was not percent-encoded.
  return scrubbed.replace(/([a-z][a-z0-9+.-]*:\/\/[^:@/\s]*:)\S*@/gi, '$1[redacted]@').replace(/\b(password\s*=\s*)('[^']*'|\S+)/gi, '$1[redacted]');
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

/** Postgres 23505: a unique constraint refused the row (e.g. two writers raced to insert the same key). */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
