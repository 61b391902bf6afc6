export { createDatabase, migrateLatest, migrateDownAll, pingDatabase } from './database';
export type { DatabaseOptions, Knex } from './database';
