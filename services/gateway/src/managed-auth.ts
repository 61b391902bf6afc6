import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  bearerTokenOf,
  BearerRefusedError,
  connectionIdentity,
  unavailableOnFailure,
  type ConnectionIdentity,
  type ConnectionRecord,
  type ExternalTokenVerifier,
} from '@bus/identity';
import { authorizeConnection, BearerRefusal, NotRegisteredError, TokenRejectedError, unverifiedIssuer } from '@bus/tokens';
import { decodeJwt } from 'jose';
import type { ManagedApp, ManagedTokenAuth } from './managed-apps';

type TokenApp = ManagedApp & { auth: ManagedTokenAuth };

export interface ManagedAppAuthDeps {
  apps: readonly ManagedApp[];
  /** The identity's verifier: the same cached key sets as the providers' tokens. */
  verifier: Pick<ExternalTokenVerifier, 'verify'>;
  connections: { get(clientId: string): Promise<ConnectionRecord | null> };
}

/**
 * POST /v1/jwt/messages (docs/api.md#routes, #authentication): a token of a managed app's issuer, verified exactly as a
 * registered provider's (issuer, key set, algorithms, audience, expiry), names the app by its client
 * claim; the request then publishes as the app's configured producer connection, in the configured
 * workspace. A refusal has the bearer routes' answers: 401 producer.unauthenticated for a token no
 * managed app accepts, 403 producer.not_registered for a verified client no entry names, or when the
 * configured connection is not an active producer of that app and workspace; a key-set failure 503.
 */
export function managedAppAuth(deps: ManagedAppAuthDeps): RequestHandler {
  const byIssuer = new Map<string, TokenApp[]>();
  for (const app of deps.apps) {
    if (app.auth.kind !== 'token') continue;
    const list = byIssuer.get(app.auth.issuer.issuer) ?? [];
    list.push(app as TokenApp);
    byIssuer.set(app.auth.issuer.issuer, list);
  }

  const authenticate = async (authorization: string | undefined) => {
    const token = bearerTokenOf(authorization);
    const issuer = unverifiedIssuer(token);
    const candidates = issuer === undefined ? undefined : byIssuer.get(issuer);
    if (!candidates) throw new TokenRejectedError('issuer');
    // The unverified client claim only chooses the entry whose settings verify the token; an
    // unknown client is verified against the issuer's first entry, so a forged token stays a 401.
    const chosen = candidates.find((app) => claimOf(token, app.auth.issuer.clientClaim) === app.auth.clientId);
    const app = chosen ?? (candidates[0] as TokenApp);
    const { client } = await deps.verifier.verify(token, app.auth.issuer);
    if (!chosen || client !== app.auth.clientId) throw new NotRegisteredError('managed_client');
    return managedAppIdentity(app, deps.connections);
  };

  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      res.locals.identity = await authenticate(req.header('authorization'));
    } catch (err) {
      if (err instanceof BearerRefusal) throw new BearerRefusedError(err);
      throw err;
    }
    next();
  };
}

/**
 * The caller a managed app publishes as (POST /v1/jwt/messages and POST /v1/messages alike): its
 * configured connection, which must be an active producer of the configured app and workspace, else
 * NotRegisteredError (403 producer.not_registered); a registry failure is a 503.
 */
export async function managedAppIdentity(app: ManagedApp, connections: ManagedAppAuthDeps['connections']): Promise<ConnectionIdentity> {
  const connection = await unavailableOnFailure(() => connections.get(app.connectionId));
  if (!connection || connection.appId !== app.appId || connection.workspaceId !== app.workspaceId) throw new NotRegisteredError('managed_connection');
  authorizeConnection(connection, { kind: 'producer' });
  return connectionIdentity(connection);
}

function claimOf(token: string, claim: string): unknown {
  try {
    return decodeJwt(token)[claim];
  } catch {
    return undefined;
  }
}
