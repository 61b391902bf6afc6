import type { Knex } from 'knex';

/**
 * The W3C traceparent of the publish (the Kafka record's header) kept with each stored message, so a
 * receive, possibly days later and in another process, can link its span to every message's publish
 * trace (docs/observability.md). Null when the publish was not traced.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.text('traceparent');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => {
    t.dropColumn('traceparent');
  });
}
