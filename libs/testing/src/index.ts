export { requireEnv } from './env';
export { createTestDatabase, withClient } from './database';
export type { TestDatabase } from './database';
export { freePort, startNodeProcess, waitForHttp, REPO_ROOT } from './process';
export type { ServiceProcess } from './process';
