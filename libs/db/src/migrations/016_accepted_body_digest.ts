import type { Knex } from 'knex';

/**
 * The SHA-256 of the exact bytes the gateway accepted (docs/delivery.md "Checking a record
 * against its acceptance"). Delivery confirmed every Kafka record by re-parsing its bytes and
 * recomputing their canonical content hash — 12 % of the all-in-one process at 64 publishes in flight;
 * a record whose bytes hash to this digest is the accepted message itself, so it needs neither. Rows
 * accepted before this migration have none: their records take the content-hash path, as before.
 * Nullable, no default: adding it rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE accepted_messages ADD COLUMN body_sha256 bytea');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE accepted_messages DROP COLUMN body_sha256');
}
