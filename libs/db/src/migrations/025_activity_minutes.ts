import type { Knex } from 'knex';

/**
 * The per-minute activity behind the portal's charts (docs/portal.md#activity-charts): one row per
 * connection and minute, written by the processes' activity recorders every few seconds (one upsert
 * per flush) and pruned past ACTIVITY_WINDOW_MINUTES by the same statement. Postgres rather than
 * Redis: every process that counts (gateway, delivery, pull-api) already holds a Postgres pool, and
 * delivery holds no Redis client (docs/architecture.md#tables).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE activity_minutes (
    connection_id text NOT NULL,
    minute timestamptz NOT NULL,
    workspace_id text NOT NULL,
    published int8 NOT NULL DEFAULT 0,
    refused jsonb NOT NULL DEFAULT '{}',
    delivered int8 NOT NULL DEFAULT 0,
    acked int8 NOT NULL DEFAULT 0,
    queue_depth int8,
    oldest_age_seconds float8,
    PRIMARY KEY (connection_id, minute)
  )`);
  // The workspace page reads a workspace's minutes; the prune finds the old ones.
  await knex.raw('CREATE INDEX activity_minutes_workspace ON activity_minutes (workspace_id, minute)');
  await knex.raw('CREATE INDEX activity_minutes_minute ON activity_minutes (minute)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('activity_minutes');
}
