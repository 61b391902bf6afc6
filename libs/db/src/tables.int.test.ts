import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, migrateLatest, rawQuery, type Knex } from './index';
import { ENUM_TYPES, TABLE_COLUMNS } from './tables';

// By hand rather than @bus/fixtures' useTestDatabase: libs/db is below the fixture (which is built on
// it), and this file checks what migrateLatest makes.
let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 2, applicationName: 'tables-test' });
  await migrateLatest(db);
});
afterAll(async () => {
  await db.destroy();
  await testDb.drop();
});

describe('the row types (tables.ts) against a migrated database', () => {
  it('list every table with exactly its columns, udt types and nullability', async () => {
    const { rows } = await rawQuery<{ table_name: string; column_name: string; udt_name: string; is_nullable: 'YES' | 'NO' }>(
      db,
      `SELECT table_name, column_name, udt_name, is_nullable FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name NOT LIKE 'knex\\_%' ORDER BY table_name, column_name`,
    );
    const migrated: Record<string, Record<string, string>> = {};
    for (const r of rows) (migrated[r.table_name] ??= {})[r.column_name] = r.is_nullable === 'YES' ? `${r.udt_name}?` : r.udt_name;
    expect(migrated).toEqual(TABLE_COLUMNS);
  });

  it('list every enum type with its values in order', async () => {
    const { rows } = await rawQuery<{ typname: string; labels: string[] }>(
      db,
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
         FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.typname, r.labels]))).toEqual(ENUM_TYPES);
  });
});
