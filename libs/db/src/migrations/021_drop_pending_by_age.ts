import type { Knex } from 'knex';

/**
 * deliveries_pending_by_age (migration 015) served the receive's walk of a consumer's un-acked rows
 * from the oldest; the receive now reads each story's marked head from deliveries_heads (migration
 * 020), and no statement says the index's `id > 0` fence any more. It cost a write per enqueued
 * delivery and per ack. Dropped CONCURRENTLY, outside a transaction: deliveries is written by every
 * delivery and receive, which a plain DROP INDEX would block until it got its lock.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_by_age');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_by_age');
  await knex.raw('CREATE INDEX CONCURRENTLY deliveries_pending_by_age ON deliveries (consumer_id, id) WHERE acked_at IS NULL AND id > 0');
}
