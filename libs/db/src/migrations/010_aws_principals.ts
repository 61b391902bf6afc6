import type { Knex } from 'knex';

/**
 * AWS principals (docs/admin.md "AWS principals", docs/auth.md "AWS SigV4"): an IAM role
 * ARN registered on a connection, with the access key id and secret access key the bus issued for
 * it. The secret must stay usable for HMAC, so it is sealed (AES-256-GCM under
 * SIGNING_KEY_ENCRYPTION_KEY, the access key id as additional data), never hashed and never in clear.
 * `pending` until a signed principals/verify presents the one outstanding challenge (kept only as
 * its SHA-256, with its expiry); `revoked` for good. Removing the connection removes its principals.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('aws_principals', (t) => {
    t.text('access_key_id').primary();
    t.text('connection_id').notNullable().references('connections.id').onDelete('CASCADE');
    t.text('role_arn').notNullable();
    t.text('secret_sealed').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.text('challenge_hash');
    t.timestamp('challenge_expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('verified_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.check(`status IN ('pending', 'verified', 'revoked')`, [], 'aws_principals_status');
    t.check(`access_key_id ~ '^AKIA[A-Z2-7]{16}$'`, [], 'aws_principals_access_key_id');
    t.check('(challenge_hash IS NULL) = (challenge_expires_at IS NULL)', [], 'aws_principals_challenge');
  });
  await knex.raw('CREATE INDEX aws_principals_connection ON aws_principals (connection_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('aws_principals');
}
