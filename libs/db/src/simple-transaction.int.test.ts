import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, simpleTransaction, sqlLiteral, type Knex } from './index';

/**
 * A transaction in simple queries (the gateway's group commit): its statements run in one transaction,
 * what `work` ends with goes with the COMMIT, and a failure leaves nothing behind — neither rows nor a
 * connection inside an open transaction back in the pool.
 */
let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // One connection: every test reuses the one the previous test released.
  db = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'simple-transaction-test' });
  await db.raw('create table notes (id text primary key, body text not null)');
});
afterAll(async () => {
  await db.destroy();
  await testDb.drop();
});

const ids = async () => (await db('notes').orderBy('id').select('id')).map((r: { id: string }) => r.id);
const outsideATransaction = async () => (await db.raw('select now() = statement_timestamp() as outside')).rows[0].outside as boolean;

it('answers each statement’s rows in order and commits what the work ends with', async () => {
  const answered = await simpleTransaction(db, async (tx) => {
    const [inserted, counted] = await tx.run([`insert into notes values ('a', ${sqlLiteral("it's")}) returning body`, 'select count(*)::int as n from notes']);
    return { result: { inserted, counted }, beforeCommit: [`insert into notes values ('b', 'second')`] };
  });
  expect(answered).toEqual({ inserted: [{ body: "it's" }], counted: [{ n: 1 }] });
  expect(await ids()).toEqual(['a', 'b']);
  expect(await outsideATransaction()).toBe(true);
});

it('rolls back everything when the work throws, and the connection goes back outside a transaction', async () => {
  const failed = await simpleTransaction(db, async (tx) => {
    await tx.run([`insert into notes values ('c', 'lost')`]);
    throw new Error('the work gave up');
  }).catch((e: unknown) => e);
  expect(failed).toEqual(new Error('the work gave up'));
  expect(await ids()).toEqual(['a', 'b']);
  expect(await outsideATransaction()).toBe(true);
});

it('rolls back when a statement sent with the COMMIT fails, and reports that failure', async () => {
  const failed = await simpleTransaction(db, async (tx) => {
    await tx.run([`insert into notes values ('d', 'lost')`]);
    return { result: null, beforeCommit: [`insert into notes values ('a', 'duplicate key')`] };
  }).catch((e: unknown) => e);
  expect(failed).toMatchObject({ code: '23505' }); // unique_violation
  expect(await ids()).toEqual(['a', 'b']);
  expect(await outsideATransaction()).toBe(true);
});

it('sends nothing for work that ran no statement', async () => {
  expect(await simpleTransaction(db, async () => ({ result: 'nothing to do' }))).toBe('nothing to do');
  expect(await outsideATransaction()).toBe(true);
});
