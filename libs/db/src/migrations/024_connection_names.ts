import type { Knex } from 'knex';

/**
 * A connection's name and description (what people call it; docs/api.md#connections-and-credentials) and when it
 * was last used (a token, a publish or a receive), to the minute: the services write last_used_at
 * at most once a minute per connection and process, so it is never a write per request. Existing
 * connections have neither name nor description (empty), and no last use until their next one.
 * The checks bound what is stored whatever writes it: one line of at most 100 characters for the
 * name, at most 500 for the description, which may hold newlines but no other control character.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE connections
    ADD COLUMN name text NOT NULL DEFAULT '',
    ADD COLUMN description text NOT NULL DEFAULT '',
    ADD COLUMN last_used_at timestamptz,
    ADD CONSTRAINT connections_name_text CHECK (char_length(name) <= 100 AND name !~ '[\\x01-\\x1f\\x7f-\\x9f]'),
    ADD CONSTRAINT connections_description_text CHECK (char_length(description) <= 500 AND description !~ '[\\x01-\\x09\\x0b-\\x1f\\x7f-\\x9f]')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE connections DROP COLUMN last_used_at, DROP COLUMN description, DROP COLUMN name');
}
