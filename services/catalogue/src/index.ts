export { createCatalogueService, CATALOGUE_LIMITS } from './service';
export type { CatalogueServiceDeps } from './service';
export { SkillsUnreadableError, SkillsVersionUnknownError } from './errors';
