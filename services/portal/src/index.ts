export { createPortalService } from './service';
export type { PortalServiceDeps } from './service';
