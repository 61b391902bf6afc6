import type { Client, QueryResult } from 'pg';
import type { Knex } from 'knex';
import { sqlIdentifier } from './sql-literals';

/** A statement's text with its `:name` bindings turned into `$n` positions, in the order they first appear. */
export interface PositionalStatement {
  text: string;
  names: readonly string[];
}

/**
 * `:name` → `$n` (a name used twice keeps its one position); `::type` casts are left alone. The same
 * syntax knex's named bindings use, so a statement moves between the two unchanged.
 */
export function positionalStatement(sql: string): PositionalStatement {
  const names: string[] = [];
  const text = sql.replace(/(?<![:\w]):([A-Za-z_]\w*)/g, (_, name: string) => {
    const at = names.indexOf(name);
    if (at >= 0) return `$${at + 1}`;
    names.push(name);
    return `$${names.length}`;
  });
  return { text, names };
}

/** Each statement name's one text, and whether node-postgres (protocol) or PREPARE (sql) prepares it: one server-side namespace. */
const statements = new Map<string, PositionalStatement & { sql: string; preparedBy: 'protocol' | 'sql' }>();

function registered(name: string, sql: string, preparedBy: 'protocol' | 'sql'): PositionalStatement {
  const known = statements.get(name);
  if (!known) {
    const statement = { sql, preparedBy, ...positionalStatement(sql) };
    statements.set(name, statement);
    return statement;
  }
  if (known.sql !== sql) throw new Error(`prepared statement ${name} was given two different texts`);
  if (known.preparedBy !== preparedBy) throw new Error(`prepared statement ${name} is run both by preparedQuery and by preparedSimpleQuery`);
  return known;
}

function valuesOf<V>(name: string, statement: PositionalStatement, bindings: Readonly<Record<string, V>>): V[] {
  return statement.names.map((n) => {
    if (!(n in bindings)) throw new Error(`prepared statement ${name} has no value for :${n}`);
    return bindings[n] as V;
  });
}

/**
 * When a connection's plan of a statement is made again, in ms after its first use there: 1 s, 2 s, 4 s
 * … 512 s, then never. A generic plan keeps the row counts Postgres believed when it was made, and a
 * plan made in a table's first seconds (a new install, each bench:e2e run) believes the table is empty:
 * it scanned all of `deliveries` per receive, its cost growing with the table (auto_explain, bench:e2e at
 * 200 msg/s: 1.25 ms a receive against 0.78 ms planned afresh; the acceptance read 0.35 against 0.04 ms).
 * Postgres itself re-plans once autovacuum has analyzed a table, which can take minutes on a new one;
 * past that the schedule stops, so a connection holds at most ten superseded names in node-postgres'
 * bookkeeping (the server's copies are deallocated).
 */
export const PLAN_REMADE_AFTER_MS: readonly number[] = Array.from({ length: 10 }, (_, i) => 1000 * 2 ** i);

/** Which version of each statement a connection has prepared, and when it first prepared the statement. */
interface PreparedVersion {
  version: number;
  firstUsedAt: number;
}

const preparedOn = new WeakMap<Client, Map<string, PreparedVersion>>();

/** The server-side name of a statement's version: the name itself first, then `name@1`, `name@2` … */
function versionName(name: string, version: number): string {
  return version === 0 ? name : `${name}@${version}`;
}

/**
 * The version of `name` to run on `connection` now, and the superseded version to deallocate first
 * (when its time in PLAN_REMADE_AFTER_MS has come).
 */
function versionToRun(connection: Client, name: string, now: number): { run: string; deallocate?: string } {
  let prepared = preparedOn.get(connection);
  if (!prepared) {
    prepared = new Map();
    preparedOn.set(connection, prepared);
  }
  const current = prepared.get(name);
  if (!current) {
    prepared.set(name, { version: 0, firstUsedAt: now });
    return { run: name };
  }
  const remakeAt = PLAN_REMADE_AFTER_MS[current.version];
  if (remakeAt === undefined || now - current.firstUsedAt < remakeAt) return { run: versionName(name, current.version) };
  // Moved on before the DEALLOCATE: should it fail, the next call prepares the new version anyway.
  prepared.set(name, { version: current.version + 1, firstUsedAt: current.firstUsedAt });
  return { run: versionName(name, current.version + 1), deallocate: versionName(name, current.version) };
}

/**
 * Runs a hot statement as a named prepared statement on a connection of the pool: Postgres parses it
 * once per connection and, after five executions, reuses a generic plan — for the pull API's receive
 * the planning was a third of its Postgres time (1.4 of 4.3 ms, EXPLAIN ANALYZE over a 5,000-message
 * backlog). The plan is made again on the schedule of PLAN_REMADE_AFTER_MS, so one made on an empty
 * table does not outlive the table's growth. `name` identifies the text: one name, one text, or this
 * throws (two texts under one name would make node-postgres refuse the second on every connection that
 * prepared the first). Name the columns a statement returns, never `*`: Postgres re-plans a prepared
 * statement after a migration, but refuses one whose result columns a migration changed ("cached plan
 * must not change result type").
 */
export async function preparedQuery<R>(db: Knex | Knex.Transaction, name: string, sql: string, bindings: Readonly<Record<string, unknown>>): Promise<R[]> {
  const statement = registered(name, sql, 'protocol');
  const values = valuesOf(name, statement, bindings);
  // In a transaction, knex's transaction client answers with the transaction's connection (and its
  // release is a no-op), so the statement runs inside it.
  const connection = (await db.client.acquireConnection()) as Client;
  try {
    // As knex does for its own statements (a transaction's client passes it on to the root's), so what
    // observes the queries (round-trip counts) sees this one — inside the try: an observer that throws
    // must not keep the connection from going back to the pool.
    announce(db, { sql: statement.text, bindings: values, name });
    const { run, deallocate } = versionToRun(connection, name, Date.now());
    // Before the statement, so a failure here leaves nothing of the caller's work half done.
    if (deallocate !== undefined) await connection.query(`DEALLOCATE ${sqlIdentifier(deallocate)}`);
    const result: QueryResult = await connection.query({ name: run, text: statement.text, values });
    return result.rows as R[];
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/** Tells what observes the pool's queries (round-trip counts) about a statement sent on a connection of it, as knex does for its own. */
function announce(db: Knex | Knex.Transaction, query: { sql: string; bindings: unknown[]; name?: string }): void {
  (db.client as { emit(event: string, arg: unknown): void }).emit('query', { method: 'raw', ...query });
}

/**
 * The first statement of every preparedSimpleQuery: its EXECUTEs use their statements' generic plans
 * (SET LOCAL: until the query's implicit transaction ends). With the default, `auto`, Postgres plans
 * the first five calls for their values and then keeps planning each call whenever those plans were
 * costed below the generic one, as a statement over an array of ids is when the array is shorter than
 * the ten elements a generic plan assumes: the ack's story locks (a handful of ids) were planned on every
 * call, 0.17 ms against 0.05 ms of execution, the same plan each time (docs/benchmarks.md "Planning").
 */
export const GENERIC_PLANS_ONLY = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** One statement of preparedSimpleQuery: its name, its text with `:name` bindings, and each binding as a quoted SQL literal (sqlLiteral). */
export interface PreparedStep {
  name: string;
  sql: string;
  literals: Readonly<Record<string, string>>;
}

/**
 * What PREPARE has made on a connection, by server-side name: `unknown` after a query that sent a
 * PREPARE failed — PREPARE is not undone with its transaction, so it may have run before the error.
 */
const heldOn = new WeakMap<Client, Map<string, 'held' | 'unknown'>>();

/**
 * Runs `steps` as one simple query of EXECUTEs of statements prepared with PREPARE: one round trip and
 * one implicit transaction, each statement with its own snapshot — taken when it starts, so a statement
 * after one that waited for locks sees what committed meanwhile — and, unlike a simple query of the
 * statements' own texts, no parse or plan per call (the ack's planning was 0.8 of its 1.9 ms,
 * docs/benchmarks.md "Fan-out"). The query opens with GENERIC_PLANS_ONLY, so each statement runs on its
 * generic plan from its first EXECUTE. A statement not yet prepared on the connection is prepared in
 * the same query; plans are made again on the schedule of PLAN_REMADE_AFTER_MS, as preparedQuery's are.
 * Not in a transaction of the caller's: the setting would hold for the rest of it. Answers each step's
 * rows, in order.
 */
export async function preparedSimpleQuery(db: Knex, steps: readonly PreparedStep[]): Promise<unknown[][]> {
  if (db.isTransaction) throw new Error('preparedSimpleQuery runs its own implicit transaction: call it outside a transaction');
  const planned = steps.map((step) => {
    const statement = registered(step.name, step.sql, 'sql');
    return { step, statement, literals: valuesOf(step.name, statement, step.literals) };
  });
  const connection = (await db.client.acquireConnection()) as Client;
  try {
    let held = heldOn.get(connection);
    if (!held) {
      held = new Map();
      heldOn.set(connection, held);
    }
    await settleUnknown(db, connection, held);
    const parts: string[] = [GENERIC_PLANS_ONLY];
    const executes: number[] = [];
    const preparing: string[] = [];
    const now = Date.now();
    for (const { step, statement, literals } of planned) {
      const { run, deallocate } = versionToRun(connection, step.name, now);
      if (deallocate !== undefined && held.get(deallocate) === 'held') {
        parts.push(`DEALLOCATE ${sqlIdentifier(deallocate)}`);
        held.delete(deallocate);
      }
      if (held.get(run) !== 'held' && !preparing.includes(run)) {
        parts.push(`PREPARE ${sqlIdentifier(run)} AS ${statement.text}`);
        preparing.push(run);
      }
      executes.push(parts.length);
      parts.push(`EXECUTE ${sqlIdentifier(run)}${literals.length > 0 ? `(${literals.join(', ')})` : ''}`);
    }
    const text = parts.join(';\n');
    announce(db, { sql: text, bindings: [] });
    let results: QueryResult | QueryResult[];
    try {
      results = (await connection.query(text)) as QueryResult | QueryResult[];
    } catch (error) {
      for (const name of preparing) held.set(name, 'unknown');
      throw error;
    }
    for (const name of preparing) held.set(name, 'held');
    const answers = Array.isArray(results) ? results : [results];
    return executes.map((at) => answers[at]?.rows ?? []);
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/** Asks Postgres which of the connection's `unknown` statements it holds (only after a failed query). */
async function settleUnknown(db: Knex | Knex.Transaction, connection: Client, held: Map<string, 'held' | 'unknown'>): Promise<void> {
  const unknown = [...held].filter(([, state]) => state === 'unknown').map(([name]) => name);
  if (unknown.length === 0) return;
  const sql = 'SELECT name FROM pg_prepared_statements WHERE name = ANY($1::text[])';
  announce(db, { sql, bindings: [unknown] });
  const { rows } = await connection.query<{ name: string }>(sql, [unknown]);
  for (const name of unknown) {
    if (rows.some((r) => r.name === name)) held.set(name, 'held');
    else held.delete(name);
  }
}
