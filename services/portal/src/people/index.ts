import { Router } from 'express';
import type { Knex } from '@bus/db';
import { requestValidation, unavailableOnAnyFailure, type RequestValidation } from '@bus/http';
import type { IdentityAdmin } from '@bus/identity';
import type { Logger } from '@bus/observability';
import { openapi } from '@bus/schemas';
import type { SkillLibrary } from '@bus/skills';
import type { AdminStore } from '../admin-store';
import { AdminRequestInvalidError } from '../errors';
import { portalApiRoutes } from './api-routes';
import type { PeopleSignIn } from './config';
import { PortalUnavailableError, SignInNotConfiguredError } from './errors';
import { portalPages } from './pages';
import { PeopleStore } from './people-store';
import { PortalData } from './portal-data';
import { signInRoutes } from './sign-in';
import { libraryPages } from './library-pages';
import { ToolsData, type ToolsDataDeps } from './tools-data';
import { toolsPages } from './tools-pages';
import { toolsRoutes } from './tools-routes';

export { peopleConfig, peopleSignInOf, type PeopleSignIn } from './config';
export { portalErrorPage } from './pages';
export { PeopleStore, type AuditedCollection } from './people-store';

/**
 * The portal for people (issue 21, docs/portal.md): sign-in, the pages and the portal's /api/* routes.
 * Without sign-in settings every one of its routes is 404 portal.sign_in_not_configured.
 */
export function peopleRouters(deps: {
  db: Knex;
  admin: IdentityAdmin;
  store: AdminStore;
  logger: Logger;
  signIn: PeopleSignIn | undefined;
  /** The consumer and testing tools' dependencies (tools-data.ts) and the library the browser shows. */
  tools: Omit<ToolsDataDeps, 'store' | 'data' | 'db'>;
  library: SkillLibrary;
}): Router[] {
  if (!deps.signIn) {
    const off = Router();
    off.use(['/portal', '/api/portal'], () => {
      throw new SignInNotConfiguredError();
    });
    return [off];
  }
  const people = unavailableOnAnyFailure(new PeopleStore(deps.db), (cause) => new PortalUnavailableError(cause));
  const data = new PortalData({ store: deps.store, people });
  const requests: RequestValidation = requestValidation(openapi.portal, (problem) => new AdminRequestInvalidError(problem));
  const { routes, loadSession } = signInRoutes({ signIn: deps.signIn, store: people, logger: deps.logger });
  const api = Router();
  api.use('/api/portal', requests.parameters);
  const tools = new ToolsData({ ...deps.tools, store: deps.store, data, db: deps.db });
  return [
    loadSession,
    routes,
    portalPages({ data, people }),
    toolsPages({ tools }),
    libraryPages({ library: deps.library }),
    api,
    portalApiRoutes({ admin: deps.admin, data, people, requests }),
    toolsRoutes({ tools, requests }),
  ];
}
