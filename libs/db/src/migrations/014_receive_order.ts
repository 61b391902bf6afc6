import type { Knex } from 'knex';

/**
 * A consumer's un-acked deliveries in id order — the FIFO sequence — for the receive's walk of its
 * oldest rows (services/pull-api queue-store.ts), which finds the oldest receivable heads without a
 * probe per correlation id. Partial, as deliveries_pending: acked rows are most of the table and never
 * read by it.
 *
 * Built CONCURRENTLY, outside a transaction, as 008's: every delivery and receive writes this table,
 * which a plain CREATE INDEX would block for the whole build. A build cut short leaves an invalid
 * index, so it is dropped first and the migration can simply run again.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_order');
  await knex.raw(`CREATE INDEX CONCURRENTLY deliveries_pending_order ON deliveries (consumer_id, id) WHERE state <> 'acked'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_order');
}
