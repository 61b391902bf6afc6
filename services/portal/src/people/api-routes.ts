import type { Router, Request } from 'express';
import type { RequestValidation } from '@bus/http';
import type { IdentityAdmin } from '@bus/identity';
import * as body from '../admin-requests';
import { identityCall } from '../admin-routes';
import type { PeopleStore } from './people-store';
import type { PortalData } from './portal-data';
import { organisationsOf, allows } from './policy';
import { requireKnownPermissions } from '../permission-choices';
import { requireSession } from './sign-in';
import { createRouter, validatedQuery } from '@bus/http';

export interface PortalApiDeps {
  admin: IdentityAdmin;
  data: PortalData;
  people: PeopleStore;
  /** Requests checked against schemas/openapi/portal.json (its `parameters` run in front, service.ts). */
  requests: RequestValidation;
}

/** The admin API's limit: the permission lists take as much (the same request schema). */
const BODY_BYTES = 64 * 1024;
const AUDIT_PAGE = 100;

/**
 * The portal's own /api/* routes (schemas/openapi/portal.json; docs/portal.md): what the pages' script
 * calls. Every route needs a session; every change is authorised by policy.ts and written to the audit
 * log; state-changing requests passed the CSRF check in front (sign-in.ts).
 */
export function portalApiRoutes(deps: PortalApiDeps): Router {
  const router = createRouter();
  const jsonBody = async <T>(req: Request): Promise<T> => (await deps.requests.jsonBody(req, BODY_BYTES)) as T;

  router.get('/api/portal/me', (_req, res) => {
    const session = requireSession(res);
    res.json({
      subject: session.subject,
      name: session.name,
      grants: session.grants.map(grantView),
      csrf_token: session.csrfToken,
      expires_at: session.expiresAt.toISOString(),
    });
  });

  // portal.json bounds `limit` (1–100, default 50) and checks `after` is an organisation id.
  router.get('/api/portal/organisations', async (req, res) => {
    const { limit, after } = validatedQuery(req) as { limit: number; after?: string };
    res.json(await deps.data.organisations(requireSession(res), { limit, ...(after === undefined ? {} : { after }) }));
  });

  // portal.json bounds `q` (≤ 100 characters, no control character) and reads `removed` as a boolean.
  router.get('/api/portal/workspaces/:w', async (req, res) => {
    const { q, removed } = validatedQuery(req) as { q?: string; removed?: boolean };
    res.json(await deps.data.workspace(requireSession(res), String(req.params.w), { text: q?.trim() ?? '', removed: removed ?? false }));
  });

  // The charts' data (docs/portal.md#activity-charts); portal.json bounds `minutes` (default 60).
  router.get('/api/portal/workspaces/:w/activity', async (req, res) => {
    const { minutes } = validatedQuery(req) as { minutes: number };
    res.json(await deps.data.workspaceActivity(requireSession(res), String(req.params.w), minutes));
  });

  router.get('/api/portal/connections/:c/activity', async (req, res) => {
    const { minutes } = validatedQuery(req) as { minutes: number };
    res.json(await deps.data.connectionActivity(requireSession(res), String(req.params.c), minutes));
  });

  router.post('/api/portal/apps/:a/connections', async (req, res) => {
    const session = requireSession(res);
    const appId = String(req.params.a);
    const target = await deps.data.authoriseOnApp(session, 'connection.create', appId);
    const { kind, ...about } = await jsonBody<{ kind: 'producer' | 'consumer' } & body.ConnectionAboutBody>(req);
    const issued = await identityCall(() => deps.admin.createConnection({ appId, kind, ...body.connectionAbout(about) }));
    await deps.data.audit(req, res, session, {
      action: `connection.create ${kind}`,
      target: issued.clientId,
      organisationId: target.organisationId,
      status: 201,
    });
    res.status(201).json({ client_id: issued.clientId, client_secret: issued.clientSecret, credential_version: issued.credentialVersion });
  });

  router.put('/api/portal/connections/:c/details', async (req, res) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const target = await deps.data.authoriseOnConnection(session, 'connection.describe', clientId);
    const about = body.connectionAbout(await jsonBody<body.ConnectionAboutBody>(req));
    await identityCall(() => deps.admin.describeConnection(clientId, about));
    // The audit keeps the name (one bounded line), not the description.
    await deps.data.audit(req, res, session, {
      action: `connection.describe name=${JSON.stringify(about.name)}`,
      target: clientId,
      organisationId: target.organisationId,
      status: 200,
    });
    res.json((await deps.data.authorisedConnection(session, 'connection.read', clientId)).connection);
  });

  router.post('/api/portal/connections/:c/rotate', async (req, res) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const target = await deps.data.authoriseOnConnection(session, 'connection.rotate', clientId);
    const { overlap_seconds: overlapSeconds } = await jsonBody<{ overlap_seconds: number }>(req);
    const rotated = await identityCall(() => deps.admin.rotateCredential(clientId, { overlapSeconds }));
    await deps.data.audit(req, res, session, {
      action: `connection.rotate overlap=${overlapSeconds}s`,
      target: clientId,
      organisationId: target.organisationId,
      status: 200,
    });
    res.json({
      client_id: rotated.clientId,
      client_secret: rotated.clientSecret,
      credential_version: rotated.credentialVersion,
      previous_secret_usable_until: rotated.previousUsableUntil.toISOString(),
    });
  });

  router.put('/api/portal/apps/:a/permissions', async (req, res) => {
    const session = requireSession(res);
    const appId = String(req.params.a);
    const target = await deps.data.authoriseOnApp(session, 'app.permissions', appId);
    const permissions = body.permissions(await jsonBody<body.PermissionsBody>(req));
    requireKnownPermissions(permissions);
    await identityCall(() => deps.admin.setPermissions(appId, permissions));
    await deps.data.audit(req, res, session, {
      action: `app.permissions ${permissions.systemIds.length} system ids, ${permissions.messageTypes.length} message types`,
      target: appId,
      organisationId: target.organisationId,
      status: 200,
    });
    res.json({ app_id: appId, permissions: { system_ids: permissions.systemIds, message_types: permissions.messageTypes } });
  });

  router.post('/api/portal/connections/:c/revoke', async (req, res) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const target = await deps.data.authoriseOnConnection(session, 'connection.revoke', clientId);
    await identityCall(() => deps.admin.revokeConnection(clientId));
    await deps.data.audit(req, res, session, { action: 'connection.revoke', target: clientId, organisationId: target.organisationId, status: 200 });
    res.json({ client_id: clientId, status: 'revoked' });
  });

  router.post('/api/portal/connections/:c/remove', async (req, res) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const target = await deps.data.authoriseOnConnection(session, 'connection.remove', clientId);
    await identityCall(() => deps.admin.removeConnection(clientId));
    await deps.data.audit(req, res, session, { action: 'connection.remove', target: clientId, organisationId: target.organisationId, status: 200 });
    res.json({ client_id: clientId, status: 'removed' });
  });

  router.get('/api/portal/audit', async (req, res) => {
    const session = requireSession(res);
    const scope = organisationsOf(session.grants);
    const readable = scope.ids.filter((id) => allows(session.grants, 'audit.read', { organisationId: id }));
    const search = typeof req.query.q === 'string' ? req.query.q.trim() : undefined;
    res.json({ entries: await deps.people.auditEntries({ all: scope.all, organisationIds: readable }, AUDIT_PAGE, search) });
  });

  return router;
}

function grantView(grant: { role: string; organisationId?: string }): { role: string; organisation_id: string | null } {
  return { role: grant.role, organisation_id: grant.organisationId ?? null };
}
