import type { Knex } from 'knex';

/**
 * Accepted validates of a test run (docs/testing-tools.md#test-runs): a validate stores nothing
 * otherwise, so the gateway writes the ones accepted while a run of the workspace is open, the first
 * RUN_REPORT_MESSAGES_MAX per run (what a report can list); test_runs.validations_omitted counts the
 * rest. Rows go with their run (cascade) or age out with the refusals' window.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('run_validations', (t) => {
    t.bigIncrements('id').primary();
    t.text('run_id').notNullable().references('test_runs.id').onDelete('CASCADE');
    t.text('connection_id').notNullable();
    t.text('message_id');
    t.text('message_type');
    t.text('correlation_id');
    t.timestamp('validated_at', { useTz: true }).notNullable();
  });
  // A report reads a run's rows in time order; the retention sweep ages them.
  await knex.raw('CREATE INDEX run_validations_run ON run_validations (run_id, validated_at)');
  await knex.raw('CREATE INDEX run_validations_validated_at ON run_validations (validated_at)');
  await knex.raw('ALTER TABLE test_runs ADD COLUMN validations_omitted int4 NOT NULL DEFAULT 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE test_runs DROP COLUMN validations_omitted');
  await knex.schema.dropTable('run_validations');
}
