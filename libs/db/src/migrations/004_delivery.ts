import type { Knex } from 'knex';

/**
 * The consumer queues (docs/architecture.md#data-flow, invariants C–E):
 * - messages: each accepted message once per workspace, with the producer's exact bytes (invariant E).
 * - deliveries: one row per (consumer connection, message); UNIQUE (consumer_id, message_id) makes
 *   enqueueing idempotent (invariant D). FIFO per (consumer, correlation_id) follows `id`, which
 *   delivery assigns in Kafka order (one correlation id lives on one partition, consumed in order).
 *   A row is receivable when it is the oldest un-acked row of its group and visible_at has passed
 *   (invariant C). Acked rows stay, state 'acked', until the retention sweep, so a Kafka
 *   redelivery after the ack does not enqueue the message again.
 * - quarantined_records: Kafka records delivery refused to enqueue (invariant A), for operators.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TYPE delivery_state AS ENUM ('queued', 'leased', 'acked')`);

  await knex.schema.createTable('messages', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('message_id').notNullable();
    t.binary('body').notNullable();
    t.text('message_type').notNullable();
    t.text('correlation_id').notNullable();
    t.timestamp('published_at', { useTz: true }).notNullable();
    t.integer('kafka_partition').notNullable();
    t.bigInteger('kafka_offset').notNullable();
    t.timestamp('stored_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['workspace_id', 'message_id']);
    t.index(['stored_at']);
  });

  await knex.schema.createTable('deliveries', (t) => {
    // Also the FIFO sequence within (consumer_id, correlation_id).
    t.bigIncrements('id').primary();
    t.text('consumer_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.text('workspace_id').notNullable();
    t.text('message_id').notNullable();
    t.text('correlation_id').notNullable();
    t.specificType('state', 'delivery_state').notNullable().defaultTo('queued');
    t.timestamp('visible_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Bumped by every receive, nack and release: a receipt handle is valid for one generation only.
    t.integer('lease_generation').notNullable().defaultTo(0);
    t.integer('receive_count').notNullable().defaultTo(0);
    t.timestamp('enqueued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('acked_at', { useTz: true });
    t.foreign(['workspace_id', 'message_id']).references(['workspace_id', 'message_id']).inTable('messages').onDelete('CASCADE');
    t.unique(['consumer_id', 'message_id'], { indexName: 'deliveries_consumer_message_unique' });
    t.check(`receive_count >= 0 AND lease_generation >= 0`, [], 'deliveries_counters');
  });
  // The receive path: the un-acked rows of one consumer, per group in FIFO order.
  await knex.raw(`CREATE INDEX deliveries_pending ON deliveries (consumer_id, correlation_id, id) WHERE state <> 'acked'`);
  await knex.raw(`CREATE INDEX deliveries_enqueued_at ON deliveries (enqueued_at)`);

  await knex.schema.createTable('quarantined_records', (t) => {
    t.bigIncrements('id').primary();
    t.text('topic').notNullable();
    t.integer('kafka_partition').notNullable();
    t.bigInteger('kafka_offset').notNullable();
    t.text('workspace_id');
    t.text('message_id');
    t.text('reason').notNullable();
    t.jsonb('headers').notNullable();
    t.binary('value');
    t.timestamp('quarantined_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['topic', 'kafka_partition', 'kafka_offset']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('quarantined_records');
  await knex.schema.dropTable('deliveries');
  await knex.schema.dropTable('messages');
  await knex.raw('DROP TYPE delivery_state');
}
