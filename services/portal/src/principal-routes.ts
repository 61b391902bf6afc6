import type { Router, Request } from 'express';
import { PrincipalNotFoundError, PrincipalNotPendingError, PrincipalsFullError, type PrincipalStore, type PrincipalView } from '@bus/identity';
import type { AdminStore } from './admin-store';
import { createRouter, HttpError, type RequestValidation } from '@bus/http';
import { AdminConflictError, AdminNotFoundError, AdminUnavailableError } from './errors';

export interface PrincipalOperationsDeps {
  principals: Pick<PrincipalStore, 'register' | 'list' | 'get' | 'revoke' | 'remove' | 'issueChallenge'>;
  store: Pick<AdminStore, 'connection'>;
}

/** A principal just registered: its secret access key is in this answer only. */
export interface RegisteredPrincipal {
  access_key_id: string;
  secret_access_key: string;
  principal: PrincipalView;
}

/** A challenge just issued: shown once (the bus keeps its SHA-256). */
export interface IssuedChallenge {
  access_key_id: string;
  challenge: string;
  expires_at: string;
}

/**
 * The AWS principals of a connection, as the admin API and the portal for people both change them
 * (docs/admin.md "AWS principals", docs/portal.md): a principal is reached through its own
 * connection only; registering and challenging need an active connection.
 */
export interface PrincipalOperations {
  list(clientId: string): Promise<PrincipalView[]>;
  register(clientId: string, roleArn: string): Promise<RegisteredPrincipal>;
  get(clientId: string, accessKeyId: string): Promise<PrincipalView>;
  revoke(clientId: string, accessKeyId: string): Promise<PrincipalView>;
  remove(clientId: string, accessKeyId: string): Promise<void>;
  challenge(clientId: string, accessKeyId: string): Promise<IssuedChallenge>;
}

export function principalOperations(deps: PrincipalOperationsDeps): PrincipalOperations {
  const connectionOf = async (clientId: string) => (await deps.store.connection(clientId)) ?? notFound('connection', clientId);
  const activeConnection = async (clientId: string) => {
    const connection = await connectionOf(clientId);
    if (connection.status !== 'active') throw new AdminConflictError(`Connection ${clientId} is ${connection.status}`);
    return connection;
  };
  const principalOf = async (clientId: string, accessKeyId: string) => {
    const connection = await connectionOf(clientId);
    const principal = await principalCall(() => deps.principals.get(accessKeyId));
    // A principal is reached through its own connection only.
    if (!principal || principal.client_id !== connection.client_id) notFound('AWS principal', accessKeyId);
    return principal;
  };
  return {
    list: async (clientId) => {
      const connection = await connectionOf(clientId);
      return principalCall(() => deps.principals.list({ connectionId: connection.client_id }));
    },
    register: async (clientId, roleArn) => {
      const connection = await activeConnection(clientId);
      const { principal, secretAccessKey } = await principalCall(() => deps.principals.register(connection.client_id, roleArn));
      return { access_key_id: principal.access_key_id, secret_access_key: secretAccessKey, principal };
    },
    get: principalOf,
    revoke: async (clientId, accessKeyId) => {
      const principal = await principalOf(clientId, accessKeyId);
      return principalCall(() => deps.principals.revoke(principal.access_key_id));
    },
    remove: async (clientId, accessKeyId) => {
      const principal = await principalOf(clientId, accessKeyId);
      await principalCall(() => deps.principals.remove(principal.access_key_id));
    },
    challenge: async (clientId, accessKeyId) => {
      const principal = await principalOf(clientId, accessKeyId);
      await activeConnection(principal.client_id);
      const issued = await principalCall(() => deps.principals.issueChallenge(principal.access_key_id));
      return { access_key_id: principal.access_key_id, challenge: issued.challenge, expires_at: issued.expiresAt.toISOString() };
    },
  };
}

export interface PrincipalRoutesDeps {
  principals: PrincipalOperations;
  requests: RequestValidation;
}

/**
 * A principal's body: room for the longest ARN the schema allows (2048 characters) however it is
 * JSON-escaped, so an over-long or foreign one is the schema's 400 naming the field rather than a 413.
 */
export const PRINCIPAL_BODY_BYTES = 32 * 1024;

/** #/components/schemas/PrincipalCreate (checked by requestValidation: the ARN's shape included). */
export interface PrincipalCreate {
  role_arn: string;
}

/**
 * AWS principals on a connection (docs/admin.md, "AWS principals"): register a role ARN (the secret
 * access key is in the 201 answer only), list, revoke, remove, and a one-time challenge that the
 * principal signs back to POST /v1/tenants/{t}/principals/verify. Mounted behind the operator's
 * authentication and the no-store header of the admin routes.
 */
export function principalRoutes(deps: PrincipalRoutesDeps): Router {
  const router = createRouter();
  const { principals } = deps;

  router.get('/api/admin/connections/:c/principals', async (req, res) => {
    res.json({ principals: await principals.list(param(req, 'c')) });
  });
  router.post('/api/admin/connections/:c/principals', async (req, res) => {
    const connection = param(req, 'c');
    const body = (await deps.requests.jsonBody(req, PRINCIPAL_BODY_BYTES)) as PrincipalCreate;
    const registered = await principals.register(connection, body.role_arn);
    res.status(201).location(`/api/admin/connections/${connection}/principals/${registered.access_key_id}`).json(registered);
  });
  router.get('/api/admin/connections/:c/principals/:k', async (req, res) => {
    res.json(await principals.get(param(req, 'c'), param(req, 'k')));
  });
  router.post('/api/admin/connections/:c/principals/:k/revoke', async (req, res) => {
    res.json(await principals.revoke(param(req, 'c'), param(req, 'k')));
  });
  router.delete('/api/admin/connections/:c/principals/:k', async (req, res) => {
    await principals.remove(param(req, 'c'), param(req, 'k'));
    res.status(204).end();
  });
  router.post('/api/admin/connections/:c/principals/:k/challenge', async (req, res) => {
    res.status(201).json(await principals.challenge(param(req, 'c'), param(req, 'k')));
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
 * The store's refusals as the admin API's: a principal gone meanwhile is 404, one not pending and a
 * connection holding its most principals 409;
 * anything else is Postgres failing, the documented 503 admin.unavailable (cause logged).
 */
async function principalCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof PrincipalNotFoundError) throw new AdminNotFoundError('AWS principal', err.accessKeyId);
    if (err instanceof PrincipalNotPendingError || err instanceof PrincipalsFullError) throw new AdminConflictError(err.message);
    if (err instanceof HttpError) throw err;
    throw new AdminUnavailableError(err);
  }
}
