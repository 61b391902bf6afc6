export { createPullApiService } from './service';
export type { PullApiServiceDeps } from './service';
