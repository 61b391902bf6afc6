import { createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '@bus/observability';
import { createTestDatabase, freePort, type TestDatabase } from '@bus/testing';
import { createDatabase, type Knex } from './index';

/**
 * The bounds that make a Postgres outage an error in bounded time: a statement Postgres
 * cancels, a server that never answers the connection, and query errors that do not carry the values
 * bound to them (errors reach the logs; values can be message bodies).
 */
let testDb: TestDatabase;
const opened: Knex[] = [];
const open = (opts: { url: string; connectTimeoutMs?: number; statementTimeoutMs?: number; logger?: ReturnType<typeof createLogger> }) => {
  const db = createDatabase({ poolMax: 2, applicationName: 'db-bounds-test', ...opts });
  opened.push(db);
  return db;
};

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(opened.map((db) => db.destroy()));
  await testDb.drop();
});

async function failureOf(run: Promise<unknown>): Promise<{ err: Error & { code?: string }; ms: number }> {
  const started = Date.now();
  const err = await run.then(
    () => new Error('expected a failure'),
    (e: unknown) => e as Error,
  );
  return { err, ms: Date.now() - started };
}

it('cancels a statement that runs past the statement timeout', async () => {
  const db = open({ url: testDb.url, statementTimeoutMs: 300 });
  const { err, ms } = await failureOf(db.raw('select pg_sleep(5)'));
  expect(err.code).toBe('57014'); // query_canceled
  expect(ms).toBeLessThan(2_000);
  // The connection is usable afterwards.
  expect(((await db.raw('select 1 as one')) as { rows: Array<{ one: number }> }).rows).toEqual([{ one: 1 }]);
});

it('gives up on a server that accepts the connection but never answers, within the connect timeout', async () => {
  const sockets: Socket[] = [];
  const silent: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const port = (silent.address() as { port: number }).port;
    const db = open({ url: `postgres://bus:bus@127.0.0.1:${port}/bus`, connectTimeoutMs: 300 });
    const { err, ms } = await failureOf(db.raw('select 1'));
    expect(err.message).toMatch(/timeout/i);
    expect(ms).toBeLessThan(2_000);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

it('names the SQL of a failed query with its placeholders, never the values bound to it', async () => {
  const db = open({ url: testDb.url });
  const { err } = await failureOf(db.raw('select ? as body from no_such_table', ['the message body']));
  expect(err.message).toContain('select $1 as body from no_such_table');
  expect(err.message).toContain('relation "no_such_table" does not exist');
  expect(JSON.stringify({ ...err, message: err.message })).not.toContain('the message body');
});

it("logs a refused connection as the process's JSON lines, at debug, without knex's text or the password", async () => {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const printed = jest.spyOn(console, 'log');
  try {
    const port = await freePort();
    const logger = createLogger({ service: 'db-bounds-test', level: 'debug', destination });
    const db = open({ url: `postgres://bus:refused-secret@127.0.0.1:${port}/bus`, logger });
    const { err } = await failureOf(db.raw('select 1'));
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
    // knex's own Logger writes to console.log when it has no log functions.
    expect(printed).not.toHaveBeenCalled();
    const json = lines.map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(json).toEqual([
      expect.objectContaining({ level: 'debug', msg: expect.stringMatching(/^knex: Acquire connection error: Error: connect ECONNREFUSED 127\.0\.0\.1:\d+$/) }),
    ]);
    expect(lines.join('')).not.toContain('refused-secret');
  } finally {
    printed.mockRestore();
  }
});
