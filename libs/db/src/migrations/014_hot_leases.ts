import type { Knex } from 'knex';

/**
 * Leases as HOT updates (docs/benchmarks.md, "Leases as HOT updates"). A receive's UPDATE changed
 * `state` (queued → leased), the column of deliveries_pending's predicate, so Postgres wrote every
 * leased row's new version into all five indexes of `deliveries` and left the old entries dead until
 * vacuum. The un-acked index is now keyed on `acked_at IS NULL` instead — the same rows, since a
 * CHECK keeps `acked_at` set exactly when the state is acked — so a lease, a nack, an extension and a
 * dead-lettering change no indexed column and can stay on their page (a HOT update, no index
 * entries); only the ack, which takes the row out of the un-acked index, writes index entries.
 * A fillfactor of 70 leaves room on each new page for those versions.
 */
export async function up(knex: Knex): Promise<void> {
  // Rows written before this migration by a path that set one without the other (none is known).
  await knex.raw(`UPDATE deliveries SET acked_at = coalesce(acked_at, visible_at, now()) WHERE state = 'acked' AND acked_at IS NULL`);
  await knex.raw(`UPDATE deliveries SET acked_at = NULL WHERE state <> 'acked' AND acked_at IS NOT NULL`);
  await knex.raw(`ALTER TABLE deliveries ADD CONSTRAINT deliveries_acked_at_with_state CHECK ((state = 'acked') = (acked_at IS NOT NULL))`);
  await knex.raw('DROP INDEX deliveries_pending');
  await knex.raw('CREATE INDEX deliveries_pending ON deliveries (consumer_id, correlation_id, id) WHERE acked_at IS NULL');
  await knex.raw('ALTER TABLE deliveries SET (fillfactor = 70)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE deliveries RESET (fillfactor)');
  await knex.raw('DROP INDEX deliveries_pending');
  await knex.raw(`CREATE INDEX deliveries_pending ON deliveries (consumer_id, correlation_id, id) WHERE state <> 'acked'`);
  await knex.raw('ALTER TABLE deliveries DROP CONSTRAINT deliveries_acked_at_with_state');
}
