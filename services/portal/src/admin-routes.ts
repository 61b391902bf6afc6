import type { Router, Request } from 'express';
import type { QueueOperations } from '@bus/contracts';
import { createRouter, HttpError, validatedQuery, type RequestValidation } from '@bus/http';
import { IdentityAdminError, IdentityNotFoundError, type IdentityAdmin } from '@bus/identity';
import type { SkillLibrary } from '@bus/skills';
import * as body from './admin-requests';
import type { AdminStore, ConnectionView } from './admin-store';
import { AdminConflictError, AdminNotFoundError, AdminRequestInvalidError, AdminUnavailableError } from './errors';
import type { ReplayRunner } from './replays';
import { consumerQueue, requireActiveConsumer, startReplay } from './consumer-queues';
import { registrationOperations } from './registrations';

export interface AdminRoutesDeps {
  admin: IdentityAdmin;
  store: AdminStore;
  library: SkillLibrary;
  replays: ReplayRunner;
  /** Delivery's queue operations (libs/contracts), handed in by the composition root. */
  queues: Pick<QueueOperations, 'stats'>;
  /** The replay archive of this environment (KAFKA_MESSAGES_RETENTION): 30 days Sandbox, 7 days Preview. */
  archiveMs: number;
  /**
   * Requests checked against schemas/openapi/admin.json: its `parameters` middleware runs in front of
   * this router (service.ts), its `jsonBody` reads the bodies here.
   */
  requests: RequestValidation;
  now?: () => Date;
}

/** JSON request bodies of the admin API are small; a skills file may take the catalogue's 256 KB. */
const BODY_BYTES = 64 * 1024;

/**
 * The operator's admin API (docs/admin.md): tenancy, credentials, permissions,
 * quotas, skill registrations, replay and queue stats, under /api/admin. Authentication is applied
 * in front of this router (operator-auth.ts). Every answer is `no-store`: it is account data, and
 * two of them carry a client secret.
 */
export function adminRoutes(deps: AdminRoutesDeps): Router {
  const now = deps.now ?? (() => new Date());
  const jsonBody = async <T>(req: Request): Promise<T> => (await deps.requests.jsonBody(req, BODY_BYTES)) as T;
  const router = createRouter();
  router.use('/api/admin', (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  const organisationOf = async (id: string) => (await deps.store.organisation(id)) ?? notFound('organisation', id);
  const workspaceOf = async (id: string) => (await deps.store.workspace(id)) ?? notFound('workspace', id);
  const appOf = async (id: string) => (await deps.store.app(id)) ?? notFound('app', id);
  const connectionOf = async (id: string) => (await deps.store.connection(id)) ?? notFound('connection', id);
  const activeConsumer = async (id: string): Promise<ConnectionView> => requireActiveConsumer(await connectionOf(id));
  const registrations = registrationOperations({ store: deps.store, library: deps.library });

  router.get('/api/admin/organisations', async (_req, res) => {
    res.json({ organisations: await deps.store.organisations() });
  });
  router.post('/api/admin/organisations', async (req, res) => {
    const b = await jsonBody<body.OrganisationCreate>(req);
    const id = await identityCall(() =>
      deps.admin.createOrganisation({
        name: b.name,
        kind: b.kind,
        ...(b.quota === undefined ? {} : { quota: body.quotaSetting(b.quota) }),
      }),
    );
    res.status(201).json(await organisationOf(id));
  });
  router.get('/api/admin/organisations/:o', async (req, res) => {
    res.json(await organisationOf(param(req, 'o')));
  });
  router.put('/api/admin/organisations/:o/quota', async (req, res) => {
    const quota = body.quotaSetting(await jsonBody<body.QuotaBody>(req), 'body');
    await identityCall(() => deps.admin.setQuota('organisation', param(req, 'o'), quota));
    res.json(await organisationOf(param(req, 'o')));
  });

  router.get('/api/admin/workspaces', async (req, res) => {
    res.json({ workspaces: await deps.store.workspaces({ organisationId: queryText(req, 'organisation_id') }) });
  });
  router.post('/api/admin/workspaces', async (req, res) => {
    const b = await jsonBody<body.WorkspaceCreate>(req);
    const id = await identityCall(() =>
      deps.admin.createWorkspace({
        organisationId: b.organisation_id,
        name: b.name,
        ...(b.quota === undefined ? {} : { quota: body.quotaSetting(b.quota) }),
      }),
    );
    res.status(201).json(await workspaceOf(id));
  });
  router.get('/api/admin/workspaces/:w', async (req, res) => {
    res.json(await workspaceOf(param(req, 'w')));
  });
  router.put('/api/admin/workspaces/:w/quota', async (req, res) => {
    const quota = body.quotaSetting(await jsonBody<body.QuotaBody>(req), 'body');
    await identityCall(() => deps.admin.setQuota('workspace', param(req, 'w'), quota));
    res.json(await workspaceOf(param(req, 'w')));
  });

  router.get('/api/admin/apps', async (req, res) => {
    res.json({ apps: await deps.store.apps({ workspaceId: queryText(req, 'workspace_id') }) });
  });
  router.post('/api/admin/apps', async (req, res) => {
    const b = await jsonBody<body.AppCreate>(req);
    const id = await identityCall(() =>
      deps.admin.createApp({ workspaceId: b.workspace_id, name: b.name, ...(b.organisation_id ? { organisationId: b.organisation_id } : {}) }),
    );
    res.status(201).json(await appOf(id));
  });
  router.get('/api/admin/apps/:a', async (req, res) => {
    res.json(await appOf(param(req, 'a')));
  });
  router.put('/api/admin/apps/:a/permissions', async (req, res) => {
    const permissions = body.permissions(await jsonBody<body.PermissionsBody>(req));
    await identityCall(() => deps.admin.setPermissions(param(req, 'a'), permissions));
    res.json(await appOf(param(req, 'a')));
  });

  router.get('/api/admin/connections', async (req, res) => {
    res.json({ connections: await deps.store.connections({ workspaceId: queryText(req, 'workspace_id'), appId: queryText(req, 'app_id') }) });
  });
  router.post('/api/admin/connections', async (req, res) => {
    const b = await jsonBody<body.ConnectionCreate>(req);
    const issued = await identityCall(() => deps.admin.createConnection({ appId: b.app_id, kind: b.kind }));
    res.status(201).json({
      client_id: issued.clientId,
      client_secret: issued.clientSecret,
      credential_version: issued.credentialVersion,
      connection: await connectionOf(issued.clientId),
    });
  });
  router.get('/api/admin/connections/:c', async (req, res) => {
    res.json(await connectionOf(param(req, 'c')));
  });
  router.delete('/api/admin/connections/:c', async (req, res) => {
    await identityCall(() => deps.admin.removeConnection(param(req, 'c')));
    res.status(204).end();
  });
  router.post('/api/admin/connections/:c/revoke', async (req, res) => {
    const clientId = param(req, 'c');
    const connection = await connectionOf(clientId);
    if (connection.status === 'removed') throw new AdminConflictError(`Connection ${clientId} is removed`);
    if (connection.status === 'active') await identityCall(() => deps.admin.revokeConnection(clientId));
    res.json(await connectionOf(clientId));
  });
  router.post('/api/admin/connections/:c/rotate', async (req, res) => {
    const overlap = (await jsonBody<body.RotationBody>(req)).overlap_seconds;
    const issued = await identityCall(() => deps.admin.rotateCredential(param(req, 'c'), { overlapSeconds: overlap }));
    res.json({
      client_id: issued.clientId,
      client_secret: issued.clientSecret,
      credential_version: issued.credentialVersion,
      previous_secret_usable_until: issued.previousUsableUntil.toISOString(),
      connection: await connectionOf(issued.clientId),
    });
  });

  router.get('/api/admin/connections/:c/registrations', async (req, res) => {
    res.json({ registrations: await registrations.list(param(req, 'c')) });
  });
  router.post('/api/admin/connections/:c/registrations', async (req, res) => {
    res.status(201).json({ registrations: await registrations.register(param(req, 'c'), req) });
  });
  router.delete('/api/admin/connections/:c/registrations/:r', async (req, res) => {
    await registrations.remove(param(req, 'c'), param(req, 'r'));
    res.status(204).end();
  });

  router.get('/api/admin/connections/:c/queue', async (req, res) => {
    res.json(await consumerQueue(deps.queues, await connectionOf(param(req, 'c')), now()));
  });
  router.post('/api/admin/connections/:c/replays', async (req, res) => {
    const connection = await activeConsumer(param(req, 'c'));
    res.status(202).json(await startReplay(deps, connection, await jsonBody<body.ReplayBody>(req), now()));
  });
  router.get('/api/admin/replays/:p', async (req, res) => {
    res.json((await deps.store.replay(param(req, 'p'))) ?? notFound('replay', param(req, 'p')));
  });
  return router;
}

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

/** A text query parameter the document declares (checked by requestValidation); undefined when absent. */
function queryText(req: Request, name: string): string | undefined {
  const value = validatedQuery(req)[name];
  return typeof value === 'string' ? value : undefined;
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}

/** The one translation of IdentityAdmin's errors into the admin API's (and the portal's); its dependencies' failures are 503s. */
export async function identityCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof IdentityNotFoundError) throw new AdminNotFoundError(err.what, err.id);
    if (err instanceof IdentityAdminError) throw err.kind === 'conflict' ? new AdminConflictError(err.message) : new AdminRequestInvalidError(err.message);
    // The route's own refusals (a request rule checked inside the call) are its answer already;
    // anything else is IdentityAdmin's Postgres or Kafka failing.
    if (err instanceof HttpError) throw err;
    throw new AdminUnavailableError(err);
  }
}
