import type { Knex } from 'knex';
import type { Row } from './tables';

/**
 * A configured skill instance bound to a consumer connection by the portal (table
 * skill_registrations, migration 005): the record both the admin API and the consumer's skills route
 * return, so the two can never describe a registration differently.
 */
export interface SkillRegistration {
  registration_id: string;
  /** The library version the instance was checked against. */
  library_version: string;
  registered_at: string;
  /** The instance as registered: skill_id, skill_version, instance_label, values, authority_scale. */
  instance: Record<string, unknown>;
}

export type SkillRegistrationRow = Pick<Row<'skill_registrations'>, 'id' | 'library_version' | 'instance' | 'registered_at'>;

export function skillRegistration(row: SkillRegistrationRow): SkillRegistration {
  return { registration_id: row.id, library_version: row.library_version, registered_at: row.registered_at.toISOString(), instance: row.instance };
}

/**
 * Registrations one consumer connection holds at most, as many as one skills list may hold: what the
 * consumer reads on GET …/skills, and the portal shows, stays one bounded answer.
 */
export const REGISTRATIONS_PER_CONSUMER_MAX = 200;

/** The connection's registrations, oldest first. */
export async function readSkillRegistrations(db: Knex, consumerId: string): Promise<SkillRegistration[]> {
  const rows = await db('skill_registrations').where({ consumer_id: consumerId }).orderBy('seq').select('id', 'library_version', 'instance', 'registered_at');
  return rows.map(skillRegistration);
}
