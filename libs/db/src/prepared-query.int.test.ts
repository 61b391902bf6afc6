import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, preparedQuery, type Knex } from './index';

/** Named prepared statements (the pull API's receive and ack): same rows as the plain query, prepared once per connection. */
let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // One connection: each call reuses the statement the previous one prepared on it.
  db = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'prepared-query-test' });
});
afterAll(async () => {
  await db.destroy();
  await testDb.drop();
});

const preparedOnTheConnection = async () =>
  (await db.raw(`select name from pg_prepared_statements where name like 'test.%' order by name`)).rows.map((r: { name: string }) => r.name);

it('answers the rows of the statement with the named values, and prepares it once', async () => {
  const sql = 'select :n::int + 1 as next, :label::text as label, :n::int as again';
  for (const n of [1, 2, 3]) {
    expect(await preparedQuery(db, 'test.next', sql, { n, label: `it's ${n}` })).toEqual([{ next: n + 1, label: `it's ${n}`, again: n }]);
  }
  expect(await preparedOnTheConnection()).toEqual(['test.next']);
});

it('refuses a second text under one name, and a missing value, before anything reaches Postgres', async () => {
  await expect(preparedQuery(db, 'test.next', 'select 2', {})).rejects.toThrow('prepared statement test.next was given two different texts');
  await expect(preparedQuery(db, 'test.missing', 'select :absent::int', {})).rejects.toThrow('prepared statement test.missing has no value for :absent');
});

it('passes a Postgres error through and the connection goes on serving', async () => {
  await expect(preparedQuery(db, 'test.fails', 'select 1 / :zero::int', { zero: 0 })).rejects.toMatchObject({ code: '22012' });
  expect(await preparedQuery(db, 'test.next', 'select :n::int + 1 as next, :label::text as label, :n::int as again', { n: 9, label: 'x' })).toEqual([
    { next: 10, label: 'x', again: 9 },
  ]);
});

it('is seen by what observes the pool’s queries, as knex’s own statements are', async () => {
  const seen: string[] = [];
  const observe = (q: { sql: string }) => seen.push(q.sql);
  db.on('query', observe);
  try {
    await preparedQuery(db, 'test.next', 'select :n::int + 1 as next, :label::text as label, :n::int as again', { n: 1, label: 'y' });
  } finally {
    db.off('query', observe);
  }
  expect(seen).toEqual(['select $1::int + 1 as next, $2::text as label, $1::int as again']);
});

it('runs inside a transaction when given one: a rollback takes its write back', async () => {
  await db.raw('create table marks (id int primary key)');
  const trx = await db.transaction();
  const written = await preparedQuery(trx, 'test.mark', 'insert into marks values (:id) returning id', { id: 7 });
  const seenInside = await trx('marks').pluck('id');
  await trx.rollback();
  expect(written).toEqual([{ id: 7 }]);
  expect(seenInside).toEqual([7]);
  expect(await db('marks').pluck('id')).toEqual([]);
});
