import type { Router, Request } from 'express';
import type { QueueOperations } from '@bus/contracts';
import { codeBody, createRouter, HttpError, renderError, validatedQuery, type ErrorPage, type RequestValidation } from '@bus/http';
import { IdentityAdminError, IdentityNotFoundError, type IdentityAdmin } from '@bus/identity';
import type { SkillLibrary } from '@bus/skills';
import * as body from './admin-requests';
import { pageOfRows, type ListPage } from '@bus/db';
import type { AdminStore, AppView, ConnectionView, OrganisationView, WorkspaceView } from './admin-store';
import { AdminConflictError, AdminNotFoundError, AdminRequestInvalidError, AdminUnavailableError } from './errors';
import type { ReplayRunner } from './replays';
import { consumerQueue, requireActiveConsumer, startReplay } from './consumer-queues';
import { requireKnownPermissions } from './permission-choices';
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
  const router = createRouter();
  router.use('/api/admin', (_req, res, next) => {
    res.set(NO_STORE);
    next();
  });
  const ctx = adminContext(deps);
  organisationRoutes(router, ctx);
  workspaceRoutes(router, ctx);
  appRoutes(router, ctx);
  connectionRoutes(router, ctx);
  registrationRoutes(router, ctx);
  queueAndReplayRoutes(router, ctx);
  return router;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * The admin API's refusals given before its routers run or set their header (the host's checks, the
 * operator's authentication, the parameters' validation) are no-store too; the body is the host's.
 */
export const adminErrorPage: ErrorPage = (req, err, requestId) =>
  req.path.startsWith('/api/admin') ? { json: renderError(err, requestId, codeBody), headers: NO_STORE } : undefined;

/** What the admin routes share: the request body reader, and each resource read by id (404 when absent). */
interface AdminContext {
  deps: AdminRoutesDeps;
  now: () => Date;
  jsonBody<T>(req: Request): Promise<T>;
  organisationOf(id: string): Promise<OrganisationView>;
  workspaceOf(id: string): Promise<WorkspaceView>;
  appOf(id: string): Promise<AppView>;
  connectionOf(id: string): Promise<ConnectionView>;
  activeConsumer(id: string): Promise<ConnectionView>;
  registrations: ReturnType<typeof registrationOperations>;
}

function adminContext(deps: AdminRoutesDeps): AdminContext {
  const connectionOf = async (id: string) => (await deps.store.connection(id)) ?? notFound('connection', id);
  return {
    deps,
    now: deps.now ?? (() => new Date()),
    jsonBody: async <T>(req: Request): Promise<T> => (await deps.requests.jsonBody(req, BODY_BYTES)) as T,
    organisationOf: async (id) => (await deps.store.organisation(id)) ?? notFound('organisation', id),
    workspaceOf: async (id) => (await deps.store.workspace(id)) ?? notFound('workspace', id),
    appOf: async (id) => (await deps.store.app(id)) ?? notFound('app', id),
    connectionOf,
    activeConsumer: async (id) => requireActiveConsumer(await connectionOf(id)),
    registrations: registrationOperations({ store: deps.store, library: deps.library }),
  };
}

function organisationRoutes(router: Router, ctx: AdminContext): void {
  listRoute(router, 'organisations', {
    list: (_req, page) => ctx.deps.store.organisations(page),
    idOf: (o) => o.id,
    find: (id) => ctx.deps.store.organisation(id),
  });
  router.post('/api/admin/organisations', async (req, res) => {
    const b = await ctx.jsonBody<body.OrganisationCreate>(req);
    const id = await identityCall(() =>
      ctx.deps.admin.createOrganisation({
        name: b.name,
        kind: b.kind,
        ...(b.quota === undefined ? {} : { quota: body.quotaSetting(b.quota) }),
      }),
    );
    res
      .status(201)
      .location(`/api/admin/organisations/${id}`)
      .json(await ctx.organisationOf(id));
  });
  router.get('/api/admin/organisations/:o', async (req, res) => {
    res.json(await ctx.organisationOf(param(req, 'o')));
  });
  router.put('/api/admin/organisations/:o/quota', async (req, res) => {
    const quota = body.quotaSetting(await ctx.jsonBody<body.QuotaBody>(req), 'body');
    await identityCall(() => ctx.deps.admin.setQuota('organisation', param(req, 'o'), quota));
    res.json(await ctx.organisationOf(param(req, 'o')));
  });
}

function workspaceRoutes(router: Router, ctx: AdminContext): void {
  listRoute(router, 'workspaces', {
    list: (req, page) => ctx.deps.store.workspaces({ organisationId: queryText(req, 'organisation_id') }, page),
    idOf: (w) => w.id,
    find: (id) => ctx.deps.store.workspace(id),
  });
  router.post('/api/admin/workspaces', async (req, res) => {
    const b = await ctx.jsonBody<body.WorkspaceCreate>(req);
    const id = await identityCall(() =>
      ctx.deps.admin.createWorkspace({
        organisationId: b.organisation_id,
        name: b.name,
        ...(b.quota === undefined ? {} : { quota: body.quotaSetting(b.quota) }),
      }),
    );
    res
      .status(201)
      .location(`/api/admin/workspaces/${id}`)
      .json(await ctx.workspaceOf(id));
  });
  router.get('/api/admin/workspaces/:w', async (req, res) => {
    res.json(await ctx.workspaceOf(param(req, 'w')));
  });
  router.put('/api/admin/workspaces/:w/quota', async (req, res) => {
    const quota = body.quotaSetting(await ctx.jsonBody<body.QuotaBody>(req), 'body');
    await identityCall(() => ctx.deps.admin.setQuota('workspace', param(req, 'w'), quota));
    res.json(await ctx.workspaceOf(param(req, 'w')));
  });
}

function appRoutes(router: Router, ctx: AdminContext): void {
  listRoute(router, 'apps', {
    list: (req, page) => ctx.deps.store.apps({ workspaceId: queryText(req, 'workspace_id') }, page),
    idOf: (a) => a.id,
    find: (id) => ctx.deps.store.app(id),
  });
  router.post('/api/admin/apps', async (req, res) => {
    const b = await ctx.jsonBody<body.AppCreate>(req);
    const id = await identityCall(() =>
      ctx.deps.admin.createApp({ workspaceId: b.workspace_id, name: b.name, ...(b.organisation_id ? { organisationId: b.organisation_id } : {}) }),
    );
    res
      .status(201)
      .location(`/api/admin/apps/${id}`)
      .json(await ctx.appOf(id));
  });
  router.get('/api/admin/apps/:a', async (req, res) => {
    res.json(await ctx.appOf(param(req, 'a')));
  });
  router.put('/api/admin/apps/:a/permissions', async (req, res) => {
    const permissions = body.permissions(await ctx.jsonBody<body.PermissionsBody>(req));
    requireKnownPermissions(permissions);
    await identityCall(() => ctx.deps.admin.setPermissions(param(req, 'a'), permissions));
    res.json(await ctx.appOf(param(req, 'a')));
  });
}

/** Producer and consumer connections: create, read, rename or describe, remove, revoke, and rotate a credential. */
function connectionRoutes(router: Router, ctx: AdminContext): void {
  listRoute(router, 'connections', {
    list: (req, page) => ctx.deps.store.connections({ workspaceId: queryText(req, 'workspace_id'), appId: queryText(req, 'app_id') }, page),
    idOf: (c) => c.client_id,
    find: (id) => ctx.deps.store.connection(id),
  });
  router.post('/api/admin/connections', async (req, res) => {
    const b = await ctx.jsonBody<body.ConnectionCreate>(req);
    const issued = await identityCall(() => ctx.deps.admin.createConnection({ appId: b.app_id, kind: b.kind, ...body.connectionAbout(b) }));
    res
      .status(201)
      .location(`/api/admin/connections/${issued.clientId}`)
      .json({
        client_id: issued.clientId,
        client_secret: issued.clientSecret,
        credential_version: issued.credentialVersion,
        connection: await ctx.connectionOf(issued.clientId),
      });
  });
  router.get('/api/admin/connections/:c', async (req, res) => {
    res.json(await ctx.connectionOf(param(req, 'c')));
  });
  router.put('/api/admin/connections/:c/details', async (req, res) => {
    const about = body.connectionAbout(await ctx.jsonBody<body.ConnectionAboutBody>(req));
    await identityCall(() => ctx.deps.admin.describeConnection(param(req, 'c'), about));
    res.json(await ctx.connectionOf(param(req, 'c')));
  });
  router.delete('/api/admin/connections/:c', async (req, res) => {
    await identityCall(() => ctx.deps.admin.removeConnection(param(req, 'c')));
    res.status(204).end();
  });
  router.post('/api/admin/connections/:c/revoke', async (req, res) => {
    const clientId = param(req, 'c');
    const connection = await ctx.connectionOf(clientId);
    if (connection.status === 'removed') throw new AdminConflictError(`Connection ${clientId} is removed`);
    if (connection.status === 'active') await identityCall(() => ctx.deps.admin.revokeConnection(clientId));
    res.json(await ctx.connectionOf(clientId));
  });
  router.post('/api/admin/connections/:c/rotate', async (req, res) => {
    const overlap = (await ctx.jsonBody<body.RotationBody>(req)).overlap_seconds;
    const issued = await identityCall(() => ctx.deps.admin.rotateCredential(param(req, 'c'), { overlapSeconds: overlap }));
    res.json({
      client_id: issued.clientId,
      client_secret: issued.clientSecret,
      credential_version: issued.credentialVersion,
      previous_secret_usable_until: issued.previousUsableUntil.toISOString(),
      connection: await ctx.connectionOf(issued.clientId),
    });
  });
}

/** A consumer connection's skill registrations. */
function registrationRoutes(router: Router, ctx: AdminContext): void {
  router.get('/api/admin/connections/:c/registrations', async (req, res) => {
    res.json({ registrations: await ctx.registrations.list(param(req, 'c')) });
  });
  router.post('/api/admin/connections/:c/registrations', async (req, res) => {
    res.status(201).json({ registrations: await ctx.registrations.register(param(req, 'c'), req) });
  });
  router.delete('/api/admin/connections/:c/registrations/:r', async (req, res) => {
    await ctx.registrations.remove(param(req, 'c'), param(req, 'r'));
    res.status(204).end();
  });
}

/** A consumer connection's queue stats, and its replays. */
function queueAndReplayRoutes(router: Router, ctx: AdminContext): void {
  router.get('/api/admin/connections/:c/queue', async (req, res) => {
    res.json(await consumerQueue(ctx.deps.queues, await ctx.connectionOf(param(req, 'c')), ctx.now()));
  });
  router.post('/api/admin/connections/:c/replays', async (req, res) => {
    const connection = await ctx.activeConsumer(param(req, 'c'));
    const replay = await startReplay(ctx.deps, connection, await ctx.jsonBody<body.ReplayBody>(req), ctx.now());
    res.status(202).location(`/api/admin/replays/${replay.replay_id}`).json(replay);
  });
  router.get('/api/admin/replays/:p', async (req, res) => {
    res.json((await ctx.deps.store.replay(param(req, 'p'))) ?? notFound('replay', param(req, 'p')));
  });
}

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

/**
 * `GET /api/admin/<collection>`, a page at a time (listPage), answering `{ <collection>: [...], next_after }`.
 */
function listRoute<T>(router: Router, collection: 'organisations' | 'workspaces' | 'apps' | 'connections', source: PagedSource<T>): void {
  router.get(`/api/admin/${collection}`, async (req, res) => {
    res.json(await listPage(req, collection, source));
  });
}

/** A list the admin API answers a page at a time: its rows after a page's keyset, and one of them by id. */
export interface PagedSource<T> {
  list(req: Request, page: ListPage): Promise<T[]>;
  idOf(item: T): string;
  find(id: string): Promise<unknown>;
}

/**
 * One page of a list (admin.json: `limit` 1–500, default 100; `after`, the previous page's
 * `next_after`) as `{ <collection>: [...], next_after }`. One row more than the page is read to know
 * whether another page follows. An `after` naming nothing of the list is 400, not an empty last page
 * that would end a listing silently.
 */
export async function listPage<T>(req: Request, collection: string, source: PagedSource<T>): Promise<Record<string, T[] | string | null>> {
  const { limit, after } = validatedQuery(req) as { limit: number; after?: string };
  const rows = await source.list(req, { limit: limit + 1, ...(after === undefined ? {} : { after }) });
  if (rows.length === 0 && after !== undefined && (await source.find(after)) === undefined) {
    throw new AdminRequestInvalidError('after: nothing listed has that id');
  }
  const { items, nextAfter } = pageOfRows(rows, limit, source.idOf);
  return { [collection]: items, next_after: nextAfter };
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
