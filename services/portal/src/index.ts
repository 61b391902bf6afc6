export { createPortalService } from './service';
export type { PortalServiceDeps, PortalService } from './service';
export { portalConfig, portalDepsOf } from './config';
