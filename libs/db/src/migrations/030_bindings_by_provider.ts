import type { Knex } from 'knex';

/**
 * A provider's bindings in their list's order (docs/admin.md "Identity providers"): the admin API
 * answers them a page at a time by (created_at, id), and a provider may bind a client of every
 * connection, so a page is read from this index rather than by sorting all of them each time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX identity_bindings_by_provider ON identity_bindings (provider_id, created_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX identity_bindings_by_provider');
}
