import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { arrayParameter } from './array-parameter';
import { createDatabase, preparedQuery, type Knex } from './index';

/** arrayParameter's text as Postgres reads it: the array it was made from, element for element. */
let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'array-parameter-test' });
});
afterAll(async () => {
  await db.destroy();
  await testDb.drop();
});

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
