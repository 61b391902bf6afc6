import type { Knex } from 'knex';
import * as tenancy from './001_tenancy';

interface NamedMigration {
  name: string;
  migration: Knex.Migration;
}

/**
 * Every migration, in order. Listed in code rather than read from a directory so they run the same
 * from TypeScript sources (tests) and compiled output (services), and bundle into the image.
 */
const MIGRATIONS: readonly NamedMigration[] = [{ name: '001_tenancy', migration: tenancy }];

export const migrationSource: Knex.MigrationSource<NamedMigration> = {
  getMigrations: async () => [...MIGRATIONS],
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m.migration,
};
