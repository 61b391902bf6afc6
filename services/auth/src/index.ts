export { createAuthService } from './service';
export type { AuthServiceDeps } from './service';
