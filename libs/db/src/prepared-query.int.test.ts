import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, preparedQuery, type Knex } from './index';
import { arrayParameter } from './array-parameter';
import { PLAN_REMADE_AFTER_MS } from './prepared-query';

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

describe('a plan made while a table was empty', () => {
  // The shape of the receive's UPDATE … WHERE id IN (SELECT id FROM take): a hash join over a seq scan
  // when the table looks empty, index probes once it is not.
  const lookUp = 'select g.id from grown g where g.id in (select unnest(:ids::int[]))';
  // The plan the connection's prepared statement runs with (poolMax 1: the one connection).
  const planOf = async (prepared: string) =>
    ((await db.raw(`explain execute "${prepared}"('{1}')`)).rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
  const lookUpOne = () => preparedQuery(db, 'test.grown', lookUp, { ids: [1] });
  // Generic plans from the first run (Postgres settles on one at the sixth run of a statement).
  beforeAll(() => db.raw('set plan_cache_mode = force_generic_plan'));
  afterAll(() => db.raw('reset plan_cache_mode'));
  afterEach(() => jest.restoreAllMocks());

  it('is made again once the schedule says, so the table’s growth reaches it: index probes, not the empty table’s seq scan', async () => {
    await db.raw('create table grown (id int primary key, note text)');
    const start = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
    expect(await lookUpOne()).toEqual([]);
    expect(await planOf('test.grown')).toMatch(/Seq Scan on grown/);

    await db.raw('insert into grown select generate_series(1, 100000)');
    clock.mockReturnValue(start + (PLAN_REMADE_AFTER_MS[0] as number) - 1);
    expect(await lookUpOne()).toEqual([{ id: 1 }]);
    expect(await planOf('test.grown')).toMatch(/Seq Scan on grown/);

    clock.mockReturnValue(start + (PLAN_REMADE_AFTER_MS[0] as number));
    expect(await lookUpOne()).toEqual([{ id: 1 }]);
    expect(await planOf('test.grown@1')).toMatch(/Index Only Scan using grown_pkey on grown/);
    expect((await preparedOnTheConnection()).filter((n: string) => n.startsWith('test.grown'))).toEqual(['test.grown@1']);
  });

  it('stops being remade after the schedule’s last step', async () => {
    const start = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
    await preparedQuery(db, 'test.schedule', 'select :n::int as n', { n: 1 });
    for (const after of PLAN_REMADE_AFTER_MS) {
      clock.mockReturnValue(start + after);
      expect(await preparedQuery(db, 'test.schedule', 'select :n::int as n', { n: 2 })).toEqual([{ n: 2 }]);
    }
    clock.mockReturnValue(start + 10 * (PLAN_REMADE_AFTER_MS.at(-1) as number));
    await preparedQuery(db, 'test.schedule', 'select :n::int as n', { n: 3 });
    expect((await preparedOnTheConnection()).filter((n: string) => n.startsWith('test.schedule'))).toEqual([`test.schedule@${PLAN_REMADE_AFTER_MS.length}`]);
  });
});

/** arrayParameter's text as Postgres reads it: the array it was made from, element for element. */
describe('array parameters', () => {
  it('reads back text elements with quotes, backslashes, braces, commas, spaces, "NULL" and empty strings, and nulls as nulls', async () => {
    const texts = ['plain', 'say "hi"', 'back\\slash', '\\"', '{a,b}', ' padded ', 'NULL', '', null, 'é 😀', 'x'.repeat(300)];
    const [row] = await preparedQuery<{ texts: Array<string | null> }>(db, 'test.texts', 'select :texts::text[] as texts', { texts: arrayParameter(texts) });
    expect(row?.texts).toEqual(texts);
  });

  it('reads back numbers as int[] and bigint[], and ISO instants as timestamptz[]', async () => {
    const instants = [new Date('2026-11-28T07:30:00.123Z'), new Date('1999-12-31T23:59:59.999Z')];
    const [row] = await preparedQuery<{ ints: number[]; bigints: string[]; instants: Date[] }>(
      db,
      'test.typed',
      'select :ints::int[] as ints, :bigints::bigint[] as bigints, :instants::timestamptz[] as instants',
      {
        ints: arrayParameter([1, -2, 2147483647]),
        bigints: arrayParameter(['9007199254740993', '0']),
        instants: arrayParameter(instants.map((d) => d.toISOString())),
      },
    );
    expect(row).toEqual({ ints: [1, -2, 2147483647], bigints: ['9007199254740993', '0'], instants });
  });
});
