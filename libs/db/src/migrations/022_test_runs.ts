import type { Knex } from 'knex';

/**
 * Test runs (docs/testing-tools.md#test-runs):
 * - test_runs: a label with a start and an end in one workspace. The run's report is read from what
 *   the bus already records in that window (accepted_messages, refusals, deliveries), so a run stores
 *   nothing per message. `ends_at` is when the run ends: the planned end while it is open, the stop's
 *   time once stopped; the retention sweep ages a run from it.
 * - refusals (workspace_id, refused_at): a report reads a workspace's refusals of a window.
 * - deliveries.first_received_at: the first receive that handed a copy out, for publish→receive in a
 *   report. Nullable without a default, so adding it rewrites nothing, and unindexed, so setting it
 *   keeps the receive's update HOT.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('test_runs', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('label').notNullable();
    t.text('opened_by').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.timestamp('stopped_at', { useTz: true });
    t.check('ends_at >= started_at', [], 'test_runs_window');
  });
  // The workspace's runs, newest first, and the retention sweep.
  await knex.raw('CREATE INDEX test_runs_workspace ON test_runs (workspace_id, started_at)');
  await knex.raw('CREATE INDEX test_runs_ends_at ON test_runs (ends_at)');
  await knex.raw('CREATE INDEX refusals_workspace_refused_at ON refusals (workspace_id, refused_at)');
  await knex.raw('ALTER TABLE deliveries ADD COLUMN first_received_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries DROP COLUMN first_received_at');
  await knex.raw('DROP INDEX refusals_workspace_refused_at');
  await knex.schema.dropTable('test_runs');
}
