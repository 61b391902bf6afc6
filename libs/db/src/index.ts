export { createDatabase, migrateLatest, migrateDownAll, pingDatabase, databaseReadiness } from './database';
export type { DatabaseOptions, Knex } from './database';
