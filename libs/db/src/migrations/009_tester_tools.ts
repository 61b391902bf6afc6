import type { Knex } from 'knex';

/**
 * The tester's tools (docs/testing-tools.md):
 * - refusals: the recent publish/validate refusals of a producer connection, without the message
 *   body (message_id, type and correlation id as the producer sent them, status, violations). Written
 *   in batches by the gateway's refusal recorder, which keeps the newest 100 per connection; the
 *   retention sweep removes rows older than 7 days by `refused_at`.
 * - refusal_counters: rate-limit refusals (429) are counted per connection, not listed.
 * - accepted_messages (workspace_id, correlation_id, accepted_at): the story view reads a correlation
 *   id's accepted messages in order.
 * - deliveries.nack_count / last_nacked_at: the message trace shows a nack and when it happened.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('refusals', (t) => {
    t.bigIncrements('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('connection_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.text('mode').notNullable();
    t.text('message_id');
    t.text('message_type');
    t.text('correlation_id');
    t.integer('status').notNullable();
    t.jsonb('violations').notNullable();
    t.timestamp('refused_at', { useTz: true }).notNullable();
    t.check(`mode IN ('publish', 'validate')`, [], 'refusals_mode');
  });
  // The listing (newest first per connection) and the trim to the newest 100.
  await knex.raw('CREATE INDEX refusals_connection ON refusals (connection_id, id)');
  // The 7-day retention sweep.
  await knex.raw('CREATE INDEX refusals_refused_at ON refusals (refused_at)');

  await knex.schema.createTable('refusal_counters', (t) => {
    t.text('connection_id').primary().references('connections.id').onDelete('CASCADE');
    t.bigInteger('rate_limited').notNullable().defaultTo(0);
    t.bigInteger('quota_exceeded').notNullable().defaultTo(0);
    t.timestamp('last_refused_at', { useTz: true }).notNullable();
  });

  await knex.raw('CREATE INDEX accepted_messages_story ON accepted_messages (workspace_id, correlation_id, accepted_at)');

  await knex.schema.alterTable('deliveries', (t) => {
    t.integer('nack_count').notNullable().defaultTo(0);
    t.timestamp('last_nacked_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('deliveries', (t) => {
    t.dropColumn('last_nacked_at');
    t.dropColumn('nack_count');
  });
  await knex.raw('DROP INDEX accepted_messages_story');
  await knex.schema.dropTable('refusal_counters');
  await knex.schema.dropTable('refusals');
}
