import type { Knex } from 'knex';

/**
 * One index of deliveries by message instead of two (docs/benchmarks.md, "Fan-out"). Every delivery
 * written and every ack (an ack takes the row out of the un-acked indexes, so its new row version goes
 * into all the others) wrote an entry into both (consumer_id, message_id), the enqueue's idempotency,
 * and (workspace_id, message_id), the retention's and the foreign key's lookup of a stored message's
 * deliveries: ~110 bytes of WAL each. Every reader of either names the message: the enqueue and a
 * replay (with the consumer), the message trace, story export and test-run report (with the consumer
 * connections of the workspace), the retention sweep and the foreign key (with the workspace, which
 * a message id shares with its rows). Led by the message id, one unique index serves them all; a
 * consumer's rows as a whole are read only through the un-acked and head indexes. ON CONFLICT
 * (consumer_id, message_id) infers it (a unique index on the same columns in any order).
 *
 * Built CONCURRENTLY, outside a transaction (as migration 008): every delivery writes this table. The
 * old unique constraint goes only once the new index is valid, and a run after one cut short rebuilds
 * the new index only when it was left invalid, so an enqueue's ON CONFLICT always has one to infer.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: Array<{ valid: boolean }> }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = 'deliveries_message_consumer' AND c.relnamespace = current_schema()::regnamespace`,
  );
  if (rows[0]?.valid !== true) {
    await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_message_consumer');
    await knex.raw('CREATE UNIQUE INDEX CONCURRENTLY deliveries_message_consumer ON deliveries (message_id, consumer_id)');
  }
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_consumer_message_unique');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_message');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_message ON deliveries (workspace_id, message_id)');
  await knex.raw('ALTER TABLE deliveries ADD CONSTRAINT deliveries_consumer_message_unique UNIQUE (consumer_id, message_id)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_message_consumer');
}
