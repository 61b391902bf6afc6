import { Router, type Request } from 'express';
import { PrincipalNotFoundError, PrincipalNotPendingError, type PrincipalStore } from '@bus/identity';
import type { AdminStore } from './admin-store';
import { HttpError, type RequestValidation } from '@bus/http';
import { AdminConflictError, AdminNotFoundError, AdminUnavailableError } from './errors';

export interface PrincipalRoutesDeps {
  principals: Pick<PrincipalStore, 'register' | 'list' | 'get' | 'revoke' | 'remove' | 'issueChallenge'>;
  store: Pick<AdminStore, 'connection'>;
  requests: RequestValidation;
}

/** #/components/schemas/PrincipalCreate (checked by requestValidation: the ARN's shape included). */
interface PrincipalCreate {
  role_arn: string;
}

/**
 * AWS principals on a connection (docs/admin.md, "AWS principals"): register a role ARN (the secret
 * access key is in the 201 answer only), list, revoke, remove, and a one-time challenge that the
 * principal signs back to POST /v1/tenants/{t}/principals/verify. Mounted behind the operator's
 * authentication and the no-store header of the admin routes.
 */
export function principalRoutes(deps: PrincipalRoutesDeps): Router {
  const router = Router();
  const activeConnection = async (clientId: string) => {
    const connection = (await deps.store.connection(clientId)) ?? notFound('connection', clientId);
    if (connection.status !== 'active') throw new AdminConflictError(`Connection ${clientId} is ${connection.status}`);
    return connection;
  };
  const principalOf = async (req: Request) => {
    const connection = (await deps.store.connection(param(req, 'c'))) ?? notFound('connection', param(req, 'c'));
    const principal = await principalCall(() => deps.principals.get(param(req, 'k')));
    // A principal is reached through its own connection only.
    if (!principal || principal.client_id !== connection.client_id) notFound('AWS principal', param(req, 'k'));
    return principal;
  };

  router.get('/api/admin/connections/:c/principals', async (req, res) => {
    const connection = (await deps.store.connection(param(req, 'c'))) ?? notFound('connection', param(req, 'c'));
    res.json({ principals: await principalCall(() => deps.principals.list({ connectionId: connection.client_id })) });
  });
  router.post('/api/admin/connections/:c/principals', async (req, res) => {
    const connection = await activeConnection(param(req, 'c'));
    const body = (await deps.requests.jsonBody(req, 4 * 1024)) as PrincipalCreate;
    const { principal, secretAccessKey } = await principalCall(() => deps.principals.register(connection.client_id, body.role_arn));
    res.status(201).json({ access_key_id: principal.access_key_id, secret_access_key: secretAccessKey, principal });
  });
  router.get('/api/admin/connections/:c/principals/:k', async (req, res) => {
    res.json(await principalOf(req));
  });
  router.post('/api/admin/connections/:c/principals/:k/revoke', async (req, res) => {
    const principal = await principalOf(req);
    res.json(await principalCall(() => deps.principals.revoke(principal.access_key_id)));
  });
  router.delete('/api/admin/connections/:c/principals/:k', async (req, res) => {
    const principal = await principalOf(req);
    await principalCall(() => deps.principals.remove(principal.access_key_id));
    res.status(204).end();
  });
  router.post('/api/admin/connections/:c/principals/:k/challenge', async (req, res) => {
    const principal = await principalOf(req);
    await activeConnection(principal.client_id);
    const issued = await principalCall(() => deps.principals.issueChallenge(principal.access_key_id));
    res.status(201).json({ access_key_id: principal.access_key_id, challenge: issued.challenge, expires_at: issued.expiresAt.toISOString() });
  });
  return router;
}

function param(req: Request, name: string): string {
  return String(req.params[name]);
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}

/**
 * The store's refusals as the admin API's: a principal gone meanwhile is 404, one not pending 409;
 * anything else is Postgres failing, the documented 503 admin.unavailable (cause logged).
 */
async function principalCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PrincipalNotFoundError) throw new AdminNotFoundError('AWS principal', err.accessKeyId);
    if (err instanceof PrincipalNotPendingError) throw new AdminConflictError(err.message);
    if (err instanceof HttpError) throw err;
    throw new AdminUnavailableError(err);
  }
}
