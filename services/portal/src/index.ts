export { createPortalService } from './service';
export type { PortalServiceDeps, PortalService } from './service';
export { portalConfig, portalDepsOf } from './config';
export { PeopleStore } from './people';
