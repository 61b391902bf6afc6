import type { Knex } from 'knex';

/**
 * The consumer's testing tools (docs/testing-tools.md):
 * - consumer_tools: per consumer connection, set by the operator (admin API, busctl) — the fault
 *   injection of a Sandbox (a rate of lost acks that come back as duplicates, an added delivery
 *   delay, a rate of leases cut short) and the dead-letter threshold (receives before a message is
 *   dead-lettered). No row: everything off, and the pull API's receive and ack pay nothing for it.
 * - consumer_fault_events: one row per injected fault (the message trace lists them), kept 14 days.
 * - dead_letters: a message moved off its consumer's queue after too many receives, until the
 *   operator redrives or discards it (`resolution`), kept 14 days. While one is unresolved its
 *   delivery stays the un-acked head of its correlation id with visible_at = 'infinity', so the
 *   receive statement never sees that group as receivable: the later messages wait, none is skipped.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('consumer_tools', (t) => {
    t.text('consumer_id').primary().references('connections.id').onDelete('CASCADE');
    t.double('duplicate_rate').notNullable().defaultTo(0);
    t.integer('delay_ms').notNullable().defaultTo(0);
    t.double('early_expiry_rate').notNullable().defaultTo(0);
    t.integer('max_receives');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(
      'duplicate_rate BETWEEN 0 AND 1 AND early_expiry_rate BETWEEN 0 AND 1 AND delay_ms >= 0 AND (max_receives IS NULL OR max_receives >= 1)',
      [],
      'consumer_tools_ranges',
    );
  });

  await knex.schema.createTable('consumer_fault_events', (t) => {
    t.bigIncrements('id').primary();
    t.text('consumer_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.bigInteger('delivery_id').notNullable().references('deliveries.id').onDelete('CASCADE');
    t.text('message_id').notNullable();
    t.text('kind').notNullable();
    // The delay added, or the lease's shortened length; null for a duplicate.
    t.integer('detail_ms');
    t.timestamp('injected_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`kind IN ('duplicate', 'delay', 'early_expiry')`, [], 'consumer_fault_events_kind');
  });
  // The trace's lookup by message, the one-duplicate-per-delivery check, and the retention sweep.
  await knex.raw('CREATE INDEX consumer_fault_events_message ON consumer_fault_events (message_id)');
  await knex.raw('CREATE INDEX consumer_fault_events_delivery ON consumer_fault_events (delivery_id)');
  await knex.raw('CREATE INDEX consumer_fault_events_injected_at ON consumer_fault_events (injected_at)');

  await knex.schema.createTable('dead_letters', (t) => {
    t.bigIncrements('id').primary();
    t.text('consumer_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.bigInteger('delivery_id').notNullable().references('deliveries.id').onDelete('CASCADE');
    t.text('message_id').notNullable();
    t.text('correlation_id').notNullable();
    t.integer('receive_count').notNullable();
    t.timestamp('dead_lettered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('resolved_at', { useTz: true });
    t.text('resolution');
    t.check(`(resolution IS NULL) = (resolved_at IS NULL) AND (resolution IS NULL OR resolution IN ('redriven', 'discarded'))`, [], 'dead_letters_resolution');
  });
  // A delivery is dead-lettered at most once at a time; the operator's list and the queue stats.
  await knex.raw('CREATE UNIQUE INDEX dead_letters_open ON dead_letters (delivery_id) WHERE resolved_at IS NULL');
  await knex.raw('CREATE INDEX dead_letters_consumer ON dead_letters (consumer_id, id) WHERE resolved_at IS NULL');
  await knex.raw('CREATE INDEX dead_letters_delivery ON dead_letters (delivery_id)');
  await knex.raw('CREATE INDEX dead_letters_dead_lettered_at ON dead_letters (dead_lettered_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dead_letters');
  await knex.schema.dropTable('consumer_fault_events');
  await knex.schema.dropTable('consumer_tools');
}
