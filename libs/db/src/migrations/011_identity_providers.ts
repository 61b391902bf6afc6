import type { Knex } from 'knex';

/**
 * External identity providers (docs/admin.md "Identity providers"):
 * - identity_providers: an issuer whose tokens the bearer routes accept, by its exact `iss`. The
 *   gateway fetches its keys from `jwks_url` and accepts only `algorithms` (asymmetric ones: the
 *   check below keeps HS* and none out even if a caller skipped the API's own check).
 * - identity_bindings: (provider, the value of the provider's client claim) → one connection.
 *   Removing a provider removes its bindings; removing a connection removes its bindings.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('identity_providers', (t) => {
    t.text('id').primary();
    t.text('issuer').notNullable().unique({ indexName: 'identity_providers_issuer_unique' });
    t.text('jwks_url').notNullable();
    t.specificType('audiences', 'text[]').notNullable();
    t.specificType('algorithms', 'text[]').notNullable();
    t.text('client_claim').notNullable();
    t.integer('clock_tolerance_seconds').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`id ~ '^i[a-z2-7]{12}$'`, [], 'identity_providers_id_format');
    t.check(`client_claim IN ('azp', 'client_id', 'sub')`, [], 'identity_providers_client_claim');
    t.check(`cardinality(audiences) > 0`, [], 'identity_providers_audiences');
    t.check(
      `cardinality(algorithms) > 0 AND algorithms <@ ARRAY['RS256','RS384','RS512','PS256','PS384','PS512','ES256','ES384','ES512','EdDSA']::text[]`,
      [],
      'identity_providers_algorithms',
    );
    t.check(`clock_tolerance_seconds BETWEEN 0 AND 300`, [], 'identity_providers_clock_tolerance');
  });

  await knex.schema.createTable('identity_bindings', (t) => {
    t.text('id').primary();
    t.text('provider_id').notNullable().references('identity_providers.id').onDelete('CASCADE');
    t.text('client_value').notNullable();
    t.text('connection_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['provider_id', 'client_value'], { indexName: 'identity_bindings_client_unique' });
    t.check(`id ~ '^b[a-z2-7]{12}$'`, [], 'identity_bindings_id_format');
    t.index(['connection_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('identity_bindings');
  await knex.schema.dropTable('identity_providers');
}
