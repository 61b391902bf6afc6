import { createTestDatabase, eventually, type TestDatabase } from '@bus/testing';
import { createDatabase, preparedQuery, preparedSimpleQuery, sqlLiteral, type Knex } from './index';
import { arrayParameter } from './array-parameter';
import { GENERIC_PLANS_ONLY, PLAN_REMADE_AFTER_MS } from './prepared-query';

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

/** Statements prepared with PREPARE and run as one simple query of EXECUTEs (the pull API's ack). */
describe('preparedSimpleQuery', () => {
  const next = { name: 'test.simple.next', sql: 'select :n::int + 1 as next, :label::text as label' };
  const observed = async <T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> => {
    const sent: string[] = [];
    const observe = (q: { sql: string }) => sent.push(q.sql);
    db.on('query', observe);
    try {
      return { result: await work(), sent };
    } finally {
      db.off('query', observe);
    }
  };

  it('answers each step’s rows in one round trip, preparing each statement once per connection', async () => {
    const run = (n: number) =>
      preparedSimpleQuery(db, [
        { ...next, literals: { n: String(n), label: sqlLiteral(`it's ${n}`) } },
        { name: 'test.simple.pair', sql: 'select :a::int as a, :a::int * 2 as twice', literals: { a: String(n) } },
      ]);
    const first = await observed(() => run(1));
    expect(first.result).toEqual([[{ next: 2, label: "it's 1" }], [{ a: 1, twice: 2 }]]);
    expect(first.sent).toHaveLength(1);
    expect(first.sent[0]).toMatch(/^SET LOCAL plan_cache_mode = force_generic_plan;\nPREPARE "test\.simple\.next" AS select \$1::int \+ 1/);

    const second = await observed(() => run(2));
    expect(second.result).toEqual([[{ next: 3, label: "it's 2" }], [{ a: 2, twice: 4 }]]);
    expect(second.sent).toEqual([`${GENERIC_PLANS_ONLY};\nEXECUTE "test.simple.next"(2, 'it''s 2');\nEXECUTE "test.simple.pair"(2)`]);
    expect((await preparedOnTheConnection()).filter((n: string) => n.startsWith('test.simple'))).toEqual(['test.simple.next', 'test.simple.pair']);
  });

  it('gives each statement its own snapshot: a statement after one that waited for a lock sees what committed meanwhile', async () => {
    const other = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'prepared-query-test-other' });
    try {
      await db.raw('create table arrivals (id int primary key)');
      const holder = await other.transaction();
      await holder.raw('select pg_advisory_xact_lock(4242)');
      await holder.raw('insert into arrivals values (1)');
      const answer = preparedSimpleQuery(db, [
        { name: 'test.simple.wait', sql: 'select pg_advisory_xact_lock(:key::bigint)::text as locked', literals: { key: '4242' } },
        { name: 'test.simple.count', sql: 'select count(*)::int as arrived from arrivals where id > :above::int', literals: { above: '0' } },
      ]);
      // Committed only once the first statement is waiting for the lock, i.e. after the query started.
      await eventually(
        async () => (await holder.raw(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n as number,
        (waiting) => waiting === 1,
      );
      await holder.commit();
      expect((await answer)[1]).toEqual([{ arrived: 1 }]);
    } finally {
      await other.destroy();
    }
  });

  it('runs a statement over a short array on its generic plan from the first call, where Postgres would plan every call', async () => {
    // 10,000 rows by id: a lookup of one id is costed below the generic plan's ten (its guess at an
    // array's length), so by default Postgres would plan each call for its values.
    await db.raw('create table lookups (id bigint primary key, label text not null)');
    await db.raw(`insert into lookups select g, 'row ' || g from generate_series(1, 10000) g`);
    await db.raw('analyze lookups');
    const statement = { name: 'test.simple.lookup', sql: 'select count(*)::int as found from lookups where id = any(:ids::bigint[])' };
    for (let n = 1; n <= 8; n += 1) {
      expect(await preparedSimpleQuery(db, [{ ...statement, literals: { ids: `'{${n}}'` } }])).toEqual([[{ found: 1 }]]);
    }
    const [plans] = (await db.raw(`select generic_plans::int, custom_plans::int from pg_prepared_statements where name = 'test.simple.lookup'`)).rows;
    expect(plans).toEqual({ generic_plans: 8, custom_plans: 0 });
    // The setting ended with the query's implicit transaction.
    expect((await db.raw('show plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);
  });

  it('refuses to run inside a transaction, where its setting would outlive the query', async () => {
    await expect(db.transaction((trx) => preparedSimpleQuery(trx, [{ ...next, literals: { n: '1', label: "'x'" } }]))).rejects.toThrow(
      'preparedSimpleQuery runs its own implicit transaction: call it outside a transaction',
    );
  });

  it('passes a Postgres error through, and a statement prepared by the failed query is not prepared twice', async () => {
    const failing = () => preparedSimpleQuery(db, [{ name: 'test.simple.divide', sql: 'select 1 / :d::int as q', literals: { d: '0' } }]);
    await expect(failing()).rejects.toMatchObject({ code: '22012' });
    const after = await observed(() => preparedSimpleQuery(db, [{ name: 'test.simple.divide', sql: 'select 1 / :d::int as q', literals: { d: '1' } }]));
    expect(after.result).toEqual([[{ q: 1 }]]);
    // Postgres was asked whether the failed query's PREPARE had run (it had: it is not undone), and it was not sent again.
    expect(after.sent).toEqual([expect.stringMatching(/pg_prepared_statements/), `${GENERIC_PLANS_ONLY};\nEXECUTE "test.simple.divide"(1)`]);
  });

  it('refuses a name preparedQuery runs, a second text, and a missing value, before anything reaches Postgres', async () => {
    await preparedQuery(db, 'test.protocol', 'select 1 as one', {});
    await expect(preparedSimpleQuery(db, [{ name: 'test.protocol', sql: 'select 1 as one', literals: {} }])).rejects.toThrow(
      'prepared statement test.protocol is run both by preparedQuery and by preparedSimpleQuery',
    );
    await expect(preparedSimpleQuery(db, [{ ...next, sql: 'select 2', literals: {} }])).rejects.toThrow(
      'prepared statement test.simple.next was given two different texts',
    );
    await expect(preparedSimpleQuery(db, [{ ...next, literals: { n: '1' } }])).rejects.toThrow('prepared statement test.simple.next has no value for :label');
  });

  it('makes its plans again on the schedule, deallocating the superseded one in the same query', async () => {
    const start = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start);
    try {
      const run = () => observed(() => preparedSimpleQuery(db, [{ name: 'test.simple.remade', sql: 'select :n::int as n', literals: { n: '5' } }]));
      await run();
      clock.mockReturnValue(start + (PLAN_REMADE_AFTER_MS[0] as number));
      const remade = await run();
      expect(remade.result).toEqual([[{ n: 5 }]]);
      expect(remade.sent).toEqual([
        `${GENERIC_PLANS_ONLY};\nDEALLOCATE "test.simple.remade";\nPREPARE "test.simple.remade@1" AS select $1::int as n;\nEXECUTE "test.simple.remade@1"(5)`,
      ]);
      expect((await preparedOnTheConnection()).filter((n: string) => n.startsWith('test.simple.remade'))).toEqual(['test.simple.remade@1']);
    } finally {
      clock.mockRestore();
    }
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
