import type { Knex } from 'knex';

/**
 * Message bodies compressed with lz4 instead of Postgres' default pglz (docs/operations.md, "Message
 * bodies compressed with lz4"). A ~2 KB SOM message is just over the size at which Postgres
 * compresses a row, so every enqueue compressed its body: pglz_compress was 8 % of Postgres' CPU at 64
 * publishes in flight. lz4 cost the inserting backend 31–33 ms per 1,000 of the bench's bodies against
 * 38–46 for pglz, in the same pages (docs/benchmarks.md, "Message bodies in lz4"). Only new values are
 * written with it; rows already stored stay pglz and read as before. A Postgres built without lz4
 * keeps pglz.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`DO $$
    BEGIN
      IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE messages ALTER COLUMN body SET COMPRESSION lz4;
      END IF;
    END
  $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE messages ALTER COLUMN body SET COMPRESSION default');
}
