import type { Router, Request, Response } from 'express';
import type { RequestValidation } from '@bus/http';
import { PRINCIPAL_BODY_BYTES, type PrincipalCreate, type PrincipalOperations } from '../principal-routes';
import type { BindingOperations } from '../provider-routes';
import type { RegistrationOperations } from '../registrations';
import { AdminNotFoundError } from '../errors';
import type { PortalData } from './portal-data';
import type { Action } from './policy';
import { requireSession } from './sign-in';
import { createRouter } from '@bus/http';

export interface ConnectionApiDeps {
  data: PortalData;
  /** The admin API's operations (principal-routes.ts, provider-routes.ts, registrations.ts): one set of checks for both. */
  principals: PrincipalOperations;
  bindings: BindingOperations;
  registrations: RegistrationOperations;
  /** Requests checked against schemas/openapi/portal.json. */
  requests: RequestValidation;
}

/** #/components/schemas/ConnectionBindingCreate of portal.json: the connection is the path's. */
interface ConnectionBindingCreate {
  provider_id: string;
  client: string;
}

const BODY_BYTES = 4 * 1024;

/**
 * The portal API of one connection's AWS principals, identity-provider bindings and skill
 * registrations (docs/portal.md). Each route is authorised by policy.ts on the connection's
 * organisation and app owner; each change is audited with that organisation; the POSTs passed the
 * CSRF check in front (sign-in.ts). Identity providers themselves stay the operator's (admin API).
 */
export function connectionApiRoutes(deps: ConnectionApiDeps): Router {
  const router = createRouter();
  /** The connection's id once the person may do `action` to it (404 for none, 403 for not theirs). */
  const authorised = async (req: Request, res: Response, action: Action) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const target = await deps.data.authoriseOnConnection(session, action, clientId);
    const audit = (entry: { action: string; target: string; status: number }) =>
      deps.data.audit(req, res, session, { ...entry, organisationId: target.organisationId });
    return { clientId, audit };
  };
  const param = (req: Request, name: string) => String(req.params[name]);

  router.get('/api/portal/connections/:c/principals', async (req, res) => {
    const { clientId } = await authorised(req, res, 'connection.read');
    res.json({ principals: await deps.principals.list(clientId) });
  });
  router.post('/api/portal/connections/:c/principals', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.principals');
    const { role_arn: roleArn } = (await deps.requests.jsonBody(req, PRINCIPAL_BODY_BYTES)) as PrincipalCreate;
    const registered = await deps.principals.register(clientId, roleArn);
    await audit({ action: `principal.register ${roleArn} on ${clientId}`, target: registered.access_key_id, status: 201 });
    res.status(201).json(registered);
  });
  router.post('/api/portal/connections/:c/principals/:k/challenge', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.principals');
    const issued = await deps.principals.challenge(clientId, param(req, 'k'));
    await audit({ action: `principal.challenge on ${clientId}`, target: issued.access_key_id, status: 201 });
    res.status(201).json(issued);
  });
  router.post('/api/portal/connections/:c/principals/:k/revoke', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.principals');
    const revoked = await deps.principals.revoke(clientId, param(req, 'k'));
    await audit({ action: `principal.revoke on ${clientId}`, target: revoked.access_key_id, status: 200 });
    res.json(revoked);
  });
  router.post('/api/portal/connections/:c/principals/:k/remove', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.principals');
    await deps.principals.remove(clientId, param(req, 'k'));
    await audit({ action: `principal.remove on ${clientId}`, target: param(req, 'k'), status: 200 });
    res.json({ access_key_id: param(req, 'k'), removed: true });
  });

  router.get('/api/portal/connections/:c/bindings', async (req, res) => {
    const { clientId } = await authorised(req, res, 'connection.read');
    res.json({ bindings: await deps.bindings.ofConnection(clientId) });
  });
  router.post('/api/portal/connections/:c/bindings', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.bindings');
    const body = (await deps.requests.jsonBody(req, BODY_BYTES)) as ConnectionBindingCreate;
    const binding = await deps.bindings.create({ providerId: body.provider_id, client: body.client, connectionId: clientId });
    await audit({ action: `binding.create provider ${binding.provider_id} on ${clientId}`, target: binding.id, status: 201 });
    res.status(201).json(binding);
  });
  router.post('/api/portal/connections/:c/bindings/:b/remove', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.bindings');
    // A binding is reached through its own connection only.
    const binding = (await deps.bindings.ofConnection(clientId)).find((b) => b.id === param(req, 'b')) ?? notFound('binding', param(req, 'b'));
    await deps.bindings.remove(binding.provider_id, binding.id);
    await audit({ action: `binding.remove provider ${binding.provider_id} on ${clientId}`, target: binding.id, status: 200 });
    res.json({ id: binding.id, removed: true });
  });

  router.get('/api/portal/connections/:c/registrations', async (req, res) => {
    const { clientId } = await authorised(req, res, 'connection.read');
    res.json({ registrations: await deps.registrations.list(clientId) });
  });
  router.post('/api/portal/connections/:c/registrations/check', async (req, res) => {
    // Changes nothing: the catalogue's answer for the skills file, before the person saves it.
    await authorised(req, res, 'connection.registrations');
    res.json(await deps.registrations.check(req));
  });
  router.post('/api/portal/connections/:c/registrations', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.registrations');
    const registrations = await deps.registrations.register(clientId, req);
    const labels = registrations.map((r) => String(r.instance.instance_label)).join(', ');
    await audit({ action: `registration.add ${registrations.length} (${labels.slice(0, 200)})`, target: clientId, status: 201 });
    res.status(201).json({ registrations });
  });
  router.post('/api/portal/connections/:c/registrations/:r/remove', async (req, res) => {
    const { clientId, audit } = await authorised(req, res, 'connection.registrations');
    await deps.registrations.remove(clientId, param(req, 'r'));
    await audit({ action: `registration.remove on ${clientId}`, target: param(req, 'r'), status: 200 });
    res.json({ registration_id: param(req, 'r'), removed: true });
  });
  return router;
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}
