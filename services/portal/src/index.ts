export { portalServiceOf } from './service';
export type { PortalServiceDeps, PortalService } from './service';
export { portalConfig } from './config';
export { PeopleStore } from './people';
