import type { Knex } from 'knex';

/**
 * A consumer's un-acked deliveries oldest first (docs/benchmarks.md, "Runs, shared statements, receipt HMACs"). A
 * receive looks for the oldest receivable heads (each correlation id's oldest un-acked delivery); by
 * deliveries_pending alone that is one probe per correlation id with un-acked rows — ~1,200 buffers a
 * receive over 256 of them, most of Postgres' work in bench:e2e (c). Walking this index from the
 * oldest row, the first row of each correlation id met is its head, so a short walk usually finds
 * enough (the receive falls back to the probes when it does not). Keyed like deliveries_pending on
 * `acked_at IS NULL`, so a lease stays a HOT update. Its predicate also says `id > 0`, true of every row,
 * so only a statement that says so too can use it: any statement naming a consumer could otherwise walk
 * it in id order, and generic plans made on a young table did — the ack's search for a correlation id's
 * next head walked a consumer's rows by age instead of probing deliveries_pending (700 buffers an ack).
 *
 * Built CONCURRENTLY (deliveries is written by every delivery and receive); a build cut short leaves
 * an invalid index, so it is dropped first and the migration can simply run again.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_by_age');
  await knex.raw('CREATE INDEX CONCURRENTLY deliveries_pending_by_age ON deliveries (consumer_id, id) WHERE acked_at IS NULL AND id > 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS deliveries_pending_by_age');
}
