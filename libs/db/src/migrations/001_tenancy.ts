import type { Knex } from 'knex';

/**
 * Tenancy: organisations own workspaces (tenants); an app lives in one workspace and belongs to an
 * organisation (the house itself, or an invited vendor); a connection is one app's producer or
 * consumer identity (client id = connection id) with versioned credentials; permissions say which
 * system_ids and message_types an app may publish.
 *
 * Quotas (docs/api.md#limits): a workspace carries the tier of its house; a vendor organisation carries its own
 * tier, and a vendor's connections in a house use the vendor's quota. `custom` means the three custom_*
 * columns apply, within the spec's ceiling of 200/s, bursts of 400, 10,000,000 a day.
 */

const BASE32_ID = (prefix: string) => `^${prefix}[a-z2-7]{12}$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TYPE quota_tier AS ENUM ('minimal', 'standard', 'high', 'custom')`);
  await knex.raw(`CREATE TYPE organisation_kind AS ENUM ('house', 'vendor', 'operator')`);
  await knex.raw(`CREATE TYPE connection_kind AS ENUM ('producer', 'consumer')`);
  await knex.raw(`CREATE TYPE connection_status AS ENUM ('active', 'revoked', 'removed')`);
  await knex.raw(`CREATE TYPE permission_kind AS ENUM ('system_id', 'message_type')`);

  await knex.schema.createTable('organisations', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.specificType('kind', 'organisation_kind').notNullable();
    quotas(t, 'organisations', 'minimal');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`id ~ '${BASE32_ID('o')}'`, [], 'organisations_id_format');
  });

  await knex.schema.createTable('workspaces', (t) => {
    t.text('id').primary();
    t.text('organisation_id').notNullable().references('organisations.id').onDelete('RESTRICT');
    t.text('name').notNullable();
    // Workspaces approved before tiers applied are on standard (docs/api.md#limits).
    quotas(t, 'workspaces', 'standard');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`id ~ '${BASE32_ID('w')}'`, [], 'workspaces_id_format');
    t.index(['organisation_id']);
  });

  await knex.schema.createTable('apps', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('RESTRICT');
    // The app's owner: the workspace's house, or a vendor whose quota its connections then use.
    t.text('organisation_id').notNullable().references('organisations.id').onDelete('RESTRICT');
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check(`id ~ '${BASE32_ID('a')}'`, [], 'apps_id_format');
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('connections', (t) => {
    t.text('id').primary();
    t.text('app_id').notNullable().references('apps.id').onDelete('RESTRICT');
    // Denormalised from apps so token checks ("tenant still holds the app") are one indexed read.
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('RESTRICT');
    t.specificType('kind', 'connection_kind').notNullable();
    t.specificType('status', 'connection_status').notNullable().defaultTo('active');
    t.integer('credential_version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('status_changed_at', { useTz: true });
    t.check(`id ~ '${BASE32_ID('c')}'`, [], 'connections_id_format');
    t.check('credential_version >= 1', [], 'connections_credential_version_positive');
    t.index(['workspace_id', 'kind', 'status']);
    t.index(['app_id']);
  });

  await knex.schema.createTable('credentials', (t) => {
    t.text('connection_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.integer('version').notNullable();
    // Only a hash of the secret is kept (docs/api.md#connections-and-credentials); the scheme is chosen by the token service.
    t.text('secret_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Set when a rotation replaced this secret: it keeps obtaining tokens until then, never after.
    t.timestamp('usable_until', { useTz: true });
    t.primary(['connection_id', 'version']);
    t.check('version >= 1', [], 'credentials_version_positive');
  });

  await knex.schema.createTable('permissions', (t) => {
    t.text('app_id').notNullable().references('apps.id').onDelete('CASCADE');
    t.specificType('kind', 'permission_kind').notNullable();
    t.text('value').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['app_id', 'kind', 'value']);
  });
}

function quotas(t: Knex.CreateTableBuilder, table: string, defaultTier: 'minimal' | 'standard'): void {
  t.specificType('quota_tier', 'quota_tier').notNullable().defaultTo(defaultTier);
  t.integer('custom_per_second');
  t.integer('custom_burst');
  t.bigInteger('custom_per_day');
  t.check(
    `(quota_tier <> 'custom' AND custom_per_second IS NULL AND custom_burst IS NULL AND custom_per_day IS NULL)
     OR (quota_tier = 'custom'
         AND custom_per_second BETWEEN 1 AND 200
         AND custom_burst BETWEEN custom_per_second AND 400
         AND custom_per_day BETWEEN 1 AND 10000000)`,
    [],
    `${table}_custom_limits`,
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['permissions', 'credentials', 'connections', 'apps', 'workspaces', 'organisations']) {
    await knex.schema.dropTable(table);
  }
  for (const type of ['permission_kind', 'connection_status', 'connection_kind', 'organisation_kind', 'quota_tier']) {
    await knex.raw(`DROP TYPE ${type}`);
  }
}
