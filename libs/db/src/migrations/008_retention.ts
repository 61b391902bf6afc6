import type { Knex } from 'knex';

/**
 * The indexes the retention sweeps need (the registry in libs/queue retention.ts; docs/operations.md, "Retention"), so
 * each batch reads a bounded range of one index instead of scanning a table:
 * - story_state by updated_at, and accepted_messages by (workspace, correlation id, accepted_at): a
 *   story's state stays while any of its messages is inside the idempotency window;
 * - deliveries by (workspace, message): a stored message goes once no delivery refers to it, and the
 *   foreign key's ON DELETE CASCADE looks its deliveries up the same way;
 * - quarantined_records by quarantined_at; replay_jobs by when they last did anything.
 *
 * Built CONCURRENTLY, outside a transaction: on a running bus these tables are written by every
 * publish and delivery, which a plain CREATE INDEX would block for the whole build. A build cut short
 * leaves an invalid index, so each is dropped first and the migration can simply run again.
 */
const INDEXES: ReadonlyArray<{ name: string; on: string }> = [
  { name: 'story_state_updated_at', on: 'story_state (updated_at)' },
  { name: 'accepted_messages_correlation', on: 'accepted_messages (workspace_id, correlation_id, accepted_at)' },
  { name: 'deliveries_message', on: 'deliveries (workspace_id, message_id)' },
  { name: 'quarantined_records_quarantined_at', on: 'quarantined_records (quarantined_at)' },
  { name: 'replay_jobs_last_activity', on: 'replay_jobs ((coalesce(finished_at, heartbeat_at)))' },
];

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  for (const index of INDEXES) {
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
    await knex.raw(`CREATE INDEX CONCURRENTLY ${index.name} ON ${index.on}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const index of [...INDEXES].reverse()) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
}
