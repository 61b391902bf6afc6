import knex, { type Knex } from 'knex';
import { migrationSource } from './migrations';

export type { Knex };

export interface DatabaseOptions {
  url: string;
  poolMax: number;
  /** Names the connections in pg_stat_activity. */
  applicationName: string;
}

export function createDatabase(opts: DatabaseOptions): Knex {
  return knex({
    client: 'pg',
    connection: { connectionString: opts.url, application_name: opts.applicationName },
    pool: { min: 0, max: opts.poolMax },
    migrations: { migrationSource, tableName: 'knex_migrations' },
  });
}

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

/** Rolls every migration back; for tests and for operators tearing an environment down. */
export async function migrateDownAll(db: Knex): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback(undefined, true)) as [number, string[]];
  return reverted;
}

export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}

export function databaseReadiness(db: Knex) {
  return { name: 'postgres', check: () => pingDatabase(db) };
}
