import type { Router } from 'express';
import type { Knex } from '@bus/db';
import { createRouter, requestValidation, unavailableOnAnyFailure, type RequestValidation } from '@bus/http';
import type { IdentityAdmin } from '@bus/identity';
import type { Logger } from '@bus/observability';
import { openapi } from '@bus/schemas';
import type { SkillLibrary } from '@bus/skills';
import type { AdminStore } from '../admin-store';
import { AdminRequestInvalidError } from '../errors';
import type { PrincipalOperations } from '../principal-routes';
import type { BindingOperations } from '../provider-routes';
import type { RegistrationOperations } from '../registrations';
import { activityAssets } from './activity-charts';
import { portalApiRoutes } from './api-routes';
import { connectionApiRoutes } from './connection-api';
import { connectionPages } from './connection-pages';
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
export { portalErrorPage } from './error-page';
export { PeopleStore, type AuditedCollection } from './people-store';

/**
 * The portal for people (docs/portal.md): sign-in, the pages and the portal's /api/* routes.
 * Without sign-in settings every one of its routes is 404 portal.sign_in_not_configured.
 */
export interface PeopleRoutersDeps {
  db: Knex;
  admin: IdentityAdmin;
  store: AdminStore;
  logger: Logger;
  signIn: PeopleSignIn | undefined;
  /** The consumer and testing tools' dependencies (tools-data.ts) and the library the browser shows. */
  tools: Omit<ToolsDataDeps, 'store' | 'data' | 'db'>;
  library: SkillLibrary;
  /** The admin API's operations on a connection's principals, bindings and registrations (connection-api.ts). */
  principals: PrincipalOperations;
  bindings: BindingOperations;
  registrations: RegistrationOperations;
}

export function peopleRouters(deps: PeopleRoutersDeps): Router[] {
  if (!deps.signIn) {
    const off = createRouter();
    off.use(['/portal', '/api/portal'], () => {
      throw new SignInNotConfiguredError();
    });
    return [off];
  }
  const people = unavailableOnAnyFailure(new PeopleStore(deps.db), (cause) => new PortalUnavailableError(cause));
  const data = new PortalData({ store: deps.store, people });
  const requests: RequestValidation = requestValidation(openapi.portal, (problem) => new AdminRequestInvalidError(problem), { requireJsonMediaType: true });
  const { routes, loadSession } = signInRoutes({ signIn: deps.signIn, store: people, logger: deps.logger });
  const api = createRouter();
  api.use('/api/portal', requests.parameters);
  const tools = new ToolsData({ ...deps.tools, store: deps.store, data, db: deps.db });
  const connectionOperations = { principals: deps.principals, bindings: deps.bindings, registrations: deps.registrations };
  // The portal's port opens on the portal's pages (the APIs keep their own paths).
  const root = createRouter();
  root.get('/', (_req, res) => res.redirect(303, '/portal'));
  return [
    root,
    loadSession,
    routes,
    portalPages({ data, people }),
    activityAssets(),
    connectionPages({ data, ...connectionOperations }),
    toolsPages({ tools }),
    libraryPages({ library: deps.library }),
    api,
    portalApiRoutes({ admin: deps.admin, data, people, requests }),
    connectionApiRoutes({ data, requests, ...connectionOperations }),
    toolsRoutes({ tools, requests }),
  ];
}
