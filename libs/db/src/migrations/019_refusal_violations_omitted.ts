import type { Knex } from 'knex';

/**
 * A stored refusal keeps only its first few violations (a hostile body can carry tens of thousands);
 * violations_omitted counts the rest, so the recent-refusals view says how many were left out.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE refusals ADD COLUMN violations_omitted integer NOT NULL DEFAULT 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE refusals DROP COLUMN violations_omitted');
}
