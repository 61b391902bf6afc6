import type { Knex } from 'knex';

/**
 * Deliveries without their index on enqueued_at (docs/benchmarks.md, "Fan-out"): every delivery wrote
 * an entry into it, and every ack another (an ack is not a HOT update), ~145 bytes of WAL a delivery.
 * Its readers were the retention sweep and its oldest-row gauge, which now walk the primary key: ids
 * are handed out as deliveries are enqueued, so the lowest ids are the oldest rows (libs/queue
 * retention.ts `oldestFirstBy`).
 *
 * Dropped CONCURRENTLY, outside a transaction (as migration 027): every delivery writes this table.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_enqueued_at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_enqueued_at ON deliveries (enqueued_at)');
}
