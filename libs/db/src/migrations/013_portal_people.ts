import type { Knex } from 'knex';

/**
 * The portal for people (docs/portal.md):
 * - portal_logins: one sign-in in progress (OIDC authorization code + PKCE): the PKCE verifier and
 *   nonce of the state the browser carries, kept until the provider sends the browser back (at most
 *   10 minutes, then refused and swept).
 * - portal_sessions: a signed-in person, keyed by the SHA-256 of the session cookie (a database read
 *   never yields a usable cookie), with the grants read from the provider's claim at sign-in, the
 *   CSRF token every state-changing request must echo, and the idle and absolute expiry.
 * - audit_log: every change made through the portal or the admin API: who (a person's subject and
 *   name, or the operator's HTTP Basic client id), what, when, from where, the organisation it
 *   concerns (read by that organisation's admins) — never a secret.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_logins', (t) => {
    t.text('state_hash').primary();
    t.text('code_verifier').notNullable();
    t.text('nonce').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });

  await knex.schema.createTable('portal_sessions', (t) => {
    t.text('id_hash').primary();
    t.text('subject').notNullable();
    t.text('name').notNullable();
    t.jsonb('grants').notNullable();
    t.text('csrf_token').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['created_at']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').primary();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('actor_kind').notNullable();
    t.text('actor').notNullable();
    t.text('action').notNullable();
    t.text('target').notNullable();
    // The organisation the change concerns; null when the admin API changed something no single
    // organisation owns (then only the operator reads it).
    t.text('organisation_id');
    t.text('source_address').notNullable();
    t.text('request_id');
    t.integer('status').notNullable();
    t.check(`actor_kind IN ('person', 'operator_basic')`, [], 'audit_log_actor_kind');
  });
  // The listing (newest first, per organisation) and the retention sweep.
  await knex.raw('CREATE INDEX audit_log_organisation ON audit_log (organisation_id, id)');
  await knex.raw('CREATE INDEX audit_log_at ON audit_log (at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
  await knex.schema.dropTable('portal_sessions');
  await knex.schema.dropTable('portal_logins');
}
