import type { Knex } from 'knex';

/**
 * The operator's list and redrive of quarantined records (docs/admin.md, "Quarantine") page through a
 * workspace's records by id. Under a flood of refused records (anything that can produce to the topic
 * can make them) a page would otherwise scan the whole table.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX quarantined_records_workspace ON quarantined_records (workspace_id, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX quarantined_records_workspace');
}
