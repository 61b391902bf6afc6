import type { Knex } from 'knex';

/**
 * Signing keys of the token service (docs/api.md#signing-key-set). The public key is published as a JWK; the private
 * key is kept only sealed with AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY (never in clear text).
 * Lifecycle: a key is published from created_at, signs from activates_at (later than created_at by
 * the pre-publish time, so every verifier has it before it signs), stops signing at retires_at (when
 * its successor activates) and leaves the key set at unpublish_at, once every token it signed expired.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('signing_keys', (t) => {
    // RFC 7638 thumbprint of the public key: 43 base64url characters.
    t.text('kid').primary();
    t.jsonb('public_jwk').notNullable();
    t.text('private_key_sealed').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('activates_at', { useTz: true }).notNullable();
    t.timestamp('retires_at', { useTz: true });
    t.timestamp('unpublish_at', { useTz: true });
    t.check(`kid ~ '^[A-Za-z0-9_-]{43}$'`, [], 'signing_keys_kid_format');
    t.check('activates_at >= created_at', [], 'signing_keys_published_before_signing');
    t.check('retires_at IS NULL OR (retires_at > activates_at AND unpublish_at > retires_at)', [], 'signing_keys_lifecycle_order');
  });
  // Credentials: the version a connection currently uses is connections.credential_version; a
  // rotation sets usable_until on the previous one (the owner's overlap window).
  await knex.schema.alterTable('credentials', (t) => {
    t.index(['connection_id', 'usable_until']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credentials', (t) => {
    t.dropIndex(['connection_id', 'usable_until']);
  });
  await knex.schema.dropTable('signing_keys');
}
