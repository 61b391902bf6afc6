import type { Knex } from 'knex';

/**
 * Open dead letters out of the index a receive reads (docs/delivery.md, "The lease rule"). A dead
 * letter stays its story's head until it is redriven or discarded, and deliveries_heads listed it with
 * the free heads, so every receive, peek and long poll of the consumer passed over every open dead
 * letter older than its first free head: a failing consumer with a receive limit gathers one a story,
 * and at 100,000 a receive took ~36 ms. `dead_lettered` marks them (set with visible_at 'infinity',
 * cleared by a redrive or a discard); deliveries_heads now holds the heads that are not, and
 * deliveries_dead_letter_heads the others, for the purge, which settles the stories behind them too.
 * A lease, a nack and an extension set neither column, so they stay HOT updates.
 *
 * In one transaction with deliveries locked against writes (SHARE ROW EXCLUSIVE: reads go on), as
 * migration 020: no dead letter is made between the back-fill and the new index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries ADD COLUMN dead_lettered boolean NOT NULL DEFAULT false');
  await knex.raw('LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`UPDATE deliveries SET dead_lettered = true WHERE visible_at = 'infinity' AND acked_at IS NULL`);
  await knex.raw('DROP INDEX deliveries_heads');
  await knex.raw('CREATE INDEX deliveries_heads ON deliveries (consumer_id, id) WHERE is_head AND NOT dead_lettered');
  await knex.raw('CREATE INDEX deliveries_dead_letter_heads ON deliveries (consumer_id, id) WHERE is_head AND dead_lettered');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_dead_letter_heads');
  await knex.raw('DROP INDEX deliveries_heads');
  await knex.raw('CREATE INDEX deliveries_heads ON deliveries (consumer_id, id) WHERE is_head');
  await knex.raw('ALTER TABLE deliveries DROP COLUMN dead_lettered');
}
