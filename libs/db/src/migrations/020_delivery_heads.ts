import type { Knex } from 'knex';

/**
 * Each story's head marked (docs/delivery.md "The lease rule"). A receive looked for its correlation
 * ids' heads (each one's oldest un-acked delivery) by walking the un-acked rows, and when the oldest
 * heads were held (leased, delayed, dead-lettered) by probing every correlation id with un-acked rows:
 * ~4 µs and 4 buffers a receive per open correlation id. `is_head` marks the one delivery of each
 * (consumer, correlation id) that is its oldest un-acked row, and deliveries_heads lists a consumer's
 * heads oldest first, so a receive reads free heads from the oldest and passes over only the held ones.
 * Enqueue, ack, replay and a discarded dead letter keep it, each holding its stories' advisory lock
 * (libs/queue story-lock). A lease, a nack or an extension does not change it: they stay HOT updates
 * (the index is on (consumer_id, id) and its predicate on `is_head`, neither of which they set).
 *
 * The back-fill runs with deliveries locked against writes (SHARE ROW EXCLUSIVE: reads go on), so no
 * enqueue or ack of code that does not keep the marker slips between it and the index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries ADD COLUMN is_head boolean NOT NULL DEFAULT false');
  await knex.raw('LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(
    `UPDATE deliveries SET is_head = true WHERE id IN (
       SELECT DISTINCT ON (consumer_id, correlation_id) id FROM deliveries WHERE acked_at IS NULL ORDER BY consumer_id, correlation_id, id
     )`,
  );
  await knex.raw('ALTER TABLE deliveries ADD CONSTRAINT deliveries_head_unacked CHECK (NOT is_head OR acked_at IS NULL)');
  await knex.raw('CREATE INDEX deliveries_heads ON deliveries (consumer_id, id) WHERE is_head');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deliveries_heads');
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT deliveries_head_unacked');
  await knex.raw('ALTER TABLE deliveries DROP COLUMN is_head');
}
