import type { Knex } from 'knex';

/**
 * A consumer's un-acked deliveries in id order — the FIFO sequence — for the receive's walk of its
 * oldest rows (services/pull-api queue-store.ts), which finds the oldest receivable heads without a
 * probe per correlation id. Partial, as deliveries_pending: acked rows are most of the table and never
 * read by it. Its predicate also names `lease_generation >= 0`, which every row holds (the
 * deliveries_counters CHECK) but only the walk states: Postgres uses a partial index only for a query
 * whose WHERE implies the predicate, so the lookups of one correlation id's rows (a receive's runs, an
 * ack's next head, a nack's run) keep deliveries_pending — planned with this index, a run's lookup read
 * every un-acked row of the consumer after the head, 4.2 of a receive's 6 ms (auto_explain, bench:e2e).
 *
 * Built CONCURRENTLY, outside a transaction, as 008's: every delivery and receive writes this table,
 * which a plain CREATE INDEX would block for the whole build. A build cut short leaves an invalid
 * index, so it is dropped first and the migration can simply run again.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_order');
  await knex.raw(`CREATE INDEX CONCURRENTLY deliveries_pending_order ON deliveries (consumer_id, id) WHERE state <> 'acked' AND lease_generation >= 0`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_order');
}
