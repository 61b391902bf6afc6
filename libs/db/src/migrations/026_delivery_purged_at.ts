import type { Knex } from 'knex';

/**
 * When a purge settled a delivery (libs/queue sql/purge.ts). A purged copy is acked for the queue
 * (state 'acked', acked_at set: its story moves on, its receipt handles are stale), but the tester's
 * tools must not say the consumer acked it: the message trace and the story export show it as
 * `purged`, and a test run does not count it as acked. Null for every other row, so adding the
 * column rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries ADD COLUMN purged_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries DROP COLUMN purged_at');
}
