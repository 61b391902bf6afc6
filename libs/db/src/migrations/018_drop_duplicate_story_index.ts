import type { Knex } from 'knex';

/**
 * accepted_messages had two indexes on the same columns, (workspace_id, correlation_id, accepted_at):
 * accepted_messages_correlation (migration 008, the retention sweep's) and accepted_messages_story
 * (migration 009, the story view's). Either serves both readers; every accepted message wrote an entry
 * into each. The later one goes. Dropped CONCURRENTLY, outside a transaction: the gateway writes the
 * table on every publish, which a plain DROP INDEX would block until it got its lock.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS accepted_messages_story');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS accepted_messages_story');
  await knex.raw('CREATE INDEX CONCURRENTLY accepted_messages_story ON accepted_messages (workspace_id, correlation_id, accepted_at)');
}
