export { requireEnv } from './env';
export { createTestDatabase, withClient } from './database';
export type { TestDatabase } from './database';
export { freePort, startNodeProcess, waitForHttp, waitForAllChecksOk, REPO_ROOT } from './process';
export type { ServiceProcess } from './process';
export { createOpenApiChecker, fetchObserved } from './openapi';
export type { OpenApiChecker, OpenApiDocument, ObservedResponse } from './openapi';
export { seededRandom } from './random';
