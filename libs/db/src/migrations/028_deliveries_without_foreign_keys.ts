import type { Knex } from 'knex';

/**
 * Deliveries without their two foreign keys (docs/benchmarks.md, "Fan-out"). Postgres checks a foreign
 * key row by row: an enqueue to 50 consumers ran two lookups with a key-share lock for each of its
 * rows, a third of the statement's time, while it held its stories' locks. What they guarded is kept
 * by the writers instead (docs/delivery.md, "What keeps a delivery's message and consumer"):
 * - a delivery's message is stored by the statement that writes the delivery (enqueue, replay), under
 *   its story's lock, and the retention sweep removes a stored message only when no delivery refers to
 *   it, trying the same lock (libs/queue retention.ts), so no delivery is written for a message being
 *   removed;
 * - a delivery is written only for an active consumer connection of the message's workspace, read in
 *   the same statement, and connections are revoked, never deleted, so there is nothing to cascade.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_consumer_id_foreign');
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_workspace_id_message_id_foreign');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE deliveries ADD CONSTRAINT deliveries_consumer_id_foreign FOREIGN KEY (consumer_id) REFERENCES connections (id) ON DELETE CASCADE',
  );
  await knex.raw(
    'ALTER TABLE deliveries ADD CONSTRAINT deliveries_workspace_id_message_id_foreign FOREIGN KEY (workspace_id, message_id) REFERENCES messages (workspace_id, message_id) ON DELETE CASCADE',
  );
}
