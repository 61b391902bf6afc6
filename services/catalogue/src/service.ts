import { notImplementedRouter, type Service } from '@bus/http';

/** Skill catalogue API on the portal host (spec §2.9, §4.3): no authentication, nothing stored. */
export function createCatalogueService(): Service {
  return {
    name: 'catalogue',
    routers: [notImplementedRouter([['get', '/api/skills/library'], ['post', '/api/skills/validate']])],
    readiness: [],
  };
}
