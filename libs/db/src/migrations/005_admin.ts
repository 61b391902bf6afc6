import type { Knex } from 'knex';

/**
 * What the portal admin API keeps (docs/admin.md):
 * - skill_registrations: the configured skill instances the house bound to a consumer connection,
 *   each checked by libs/skills exactly as the catalogue checks it, against `library_version`. The
 *   instance_label is unique per connection, as it is within one validated list.
 * - replay_jobs: one operator request to replay a consumer's queue from the archive. `heartbeat_at`
 *   moves while the portal works on it, so a job whose process died reads as interrupted, not running.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TYPE replay_status AS ENUM ('running', 'succeeded', 'failed')`);

  await knex.schema.createTable('skill_registrations', (t) => {
    t.text('id').primary();
    // The order of registration: the instances of one request share registered_at, and read back in
    // the order the request listed them.
    t.bigIncrements('seq', { primaryKey: false });
    t.text('consumer_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.text('instance_label').notNullable();
    t.text('library_version').notNullable();
    t.jsonb('instance').notNullable();
    t.timestamp('registered_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['consumer_id', 'instance_label'], { indexName: 'skill_registrations_label_unique' });
    t.check(`id ~ '^r[a-z2-7]{12}$'`, [], 'skill_registrations_id_format');
  });

  await knex.schema.createTable('replay_jobs', (t) => {
    t.text('id').primary();
    t.text('consumer_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.timestamp('since', { useTz: true }).notNullable();
    t.specificType('status', 'replay_status').notNullable().defaultTo('running');
    t.integer('scanned').notNullable().defaultTo(0);
    t.integer('replayed').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.text('error');
    t.timestamp('requested_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('heartbeat_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true });
    t.check(`id ~ '^p[a-z2-7]{12}$'`, [], 'replay_jobs_id_format');
    t.index(['consumer_id', 'requested_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('replay_jobs');
  await knex.schema.dropTable('skill_registrations');
  await knex.raw('DROP TYPE replay_status');
}
