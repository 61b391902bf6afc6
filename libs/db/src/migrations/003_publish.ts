import type { Knex } from 'knex';

/**
 * What the gateway records when it accepts a message (docs/architecture.md#data-flow):
 * - accepted_messages: one row per accepted message_id per workspace, kept at least 7 days (the
 *   idempotency window, docs/api.md#limits). The content hash decides duplicate (200) or reuse (409), and
 *   delivery enqueues a Kafka record only when this row matches it (invariant A).
 * - story_state: the sequence state of one correlation id (libs/som's StoryState, versioned JSON);
 *   its row lock orders the publishes of one correlation id across the Kafka produce.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('accepted_messages', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('message_id').notNullable();
    // sha256 hex of the message's canonical JSON: what "same content" means (docs/gateway.md).
    t.text('content_hash').notNullable();
    t.text('message_type').notNullable();
    t.text('correlation_id').notNullable();
    t.text('producer_connection_id').notNullable();
    t.timestamp('accepted_at', { useTz: true }).notNullable();
    t.integer('kafka_partition').notNullable();
    t.bigInteger('kafka_offset').notNullable();
    t.primary(['workspace_id', 'message_id']);
    t.check(`content_hash ~ '^[0-9a-f]{64}$'`, [], 'accepted_messages_content_hash_format');
    t.index(['accepted_at']);
  });

  await knex.schema.createTable('story_state', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('correlation_id').notNullable();
    t.jsonb('state').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'correlation_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('story_state');
  await knex.schema.dropTable('accepted_messages');
}
