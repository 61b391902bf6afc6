import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ConsumerTools } from '@bus/db';
import { DependencyUnavailableError, HttpError, unavailableUnlessDone } from '@bus/http';
import {
  authorizeBearer,
  authorizeConnection,
  BearerRefusal,
  NotRegisteredError,
  TokenRejectedError,
  unverifiedIssuer,
  verifyAccessToken,
  type AccessTokenClaims,
  type ConnectionKind,
  type TokenAudience,
} from '@bus/tokens';
import { VerifiedTokenCache, type ConnectionCache, type KeySetCache } from './cache';
import type { ConnectionRecord } from './store';

/** The connection a caller acts for, in res.locals.identity once a route authenticated it (a bus token, a provider's token, an AWS signature). */
export interface ConnectionIdentity {
  clientId: string;
  kind: ConnectionKind;
  workspaceId: string;
  organisationId: string;
  appId: string;
  credentialVersion: number;
}

/** Who called a bearer route, in res.locals.identity once authenticateBearer let the request through. */
export interface BearerIdentity extends ConnectionIdentity {
  /** A bus token's claims; absent for an external provider's token (its connection is the binding's). */
  claims?: AccessTokenClaims;
  /** The consumer connection's testing settings (docs/testing-tools.md); null when none is on. */
  consumerTools: ConsumerTools | null;
}

/**
 * External identity providers' tokens: the connection bound to a verified token of a
 * registered issuer. Throws TokenRejectedError (unknown issuer, a bad token), NotRegisteredError
 * (an unbound client) or a 503 (the provider's key set or the registry could not be read).
 */
export interface BoundClients {
  connectionOf(token: string, issuer: string): Promise<string>;
}

/** What a route knows of its caller, from the connection it acts for. */
export function connectionIdentity(c: ConnectionRecord): ConnectionIdentity {
  return { clientId: c.id, kind: c.kind, workspaceId: c.workspaceId, organisationId: c.organisationId, appId: c.appId, credentialVersion: c.credentialVersion };
}

/** 401 producer.unauthenticated, 403 producer.not_registered or 403 tenant.mismatch (docs/api.md#authentication, #errors). */
export class BearerRefusedError extends HttpError {
  override readonly name = 'BearerRefusedError';
  constructor(readonly refusal: BearerRefusal) {
    super(
      refusal.status,
      refusal.rule,
      refusal.message,
      'policy',
      // RFC 6750 §3: a 401 names the scheme; the reason stays in our logs, not in the answer. A request
      // with no bearer credentials at all gets the bare challenge (§3.1: no error code for it).
      refusal.status === 401
        ? { 'WWW-Authenticate': refusal instanceof TokenRejectedError && refusal.reason === 'missing' ? BARE_CHALLENGE : INVALID_TOKEN_CHALLENGE }
        : {},
    );
  }
}

const BARE_CHALLENGE = 'Bearer realm="bus"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="bus", error="invalid_token"';

/**
 * 503 registry.unavailable: connections, permissions or quotas could not be read; nothing was accepted
 * (docs/api.md#errors). `cause` is the store's own error, which the error middleware logs.
 */
export class RegistryUnavailableError extends DependencyUnavailableError {
  override readonly name = 'RegistryUnavailableError';
  constructor(cause: unknown) {
    super('registry.unavailable', 'The registry could not be read; nothing was carried out. Retry the request (a publish with the same message_id)', cause);
  }
}

export interface BearerAuthenticatorDeps {
  connections: ConnectionCache;
  keys: KeySetCache;
  audience: TokenAudience;
  now?: () => Date;
  /** Clock skew allowed on exp and iat; default 30 s. */
  leewaySeconds?: number;
  /** Tokens of any other issuer than the bus's own go here on producer routes; without it they are refused. */
  boundClients?: BoundClients;
}

export interface BearerAuthenticator {
  /** Authenticates an Authorization header value for a route needing `kind` (either when undefined; and tenant {t}, if any). */
  authenticate(authorization: string | undefined, need: { kind?: ConnectionKind; tenant?: string }): Promise<BearerIdentity>;
  /** Express middleware: docs/api.md#authentication rules 1–4, reading the path's {t} when the route has one. */
  authenticateBearer(opts: { kind?: ConnectionKind }): RequestHandler;
}

/** The bus tokens an authenticator has verified and still holds. */
export interface VerifiedBearerTokens {
  /**
   * Whether an Authorization header carries a bus token this process verified and still holds (no
   * signature check, no I/O): such a request's host limits can wait for its connection quota
   * (busRequestLimits' countWithQuota) without a forged token costing a verification first.
   */
  holdsVerifiedToken(authorization: string | undefined): boolean;
}

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

export function createBearerAuthenticator(deps: BearerAuthenticatorDeps): BearerAuthenticator & VerifiedBearerTokens {
  const now = deps.now ?? (() => new Date());
  const leewaySeconds = deps.leewaySeconds ?? 30;
  const verified = new VerifiedTokenCache();

  const authenticate: BearerAuthenticator['authenticate'] = async (authorization, need) => {
    try {
      const token = bearerTokenOf(authorization);
      // Only the bus's own tokens are held verified: such a token is neither decoded again nor
      // dispatched (its kid and exp are still checked against the key set and the clock below).
      const heldKid = verified.heldKid(token);
      // One dispatch by issuer: the bus's own tokens below, a provider's on the producer routes
      // (the consumer routes take bus tokens only, docs/api.md#authentication).
      const issuer = heldKid === undefined ? unverifiedIssuer(token) : deps.audience.issuer;
      if (deps.boundClients && need.kind === 'producer' && issuer !== undefined && issuer !== deps.audience.issuer) {
        const connectionId = await deps.boundClients.connectionOf(token, issuer);
        const connection = await unavailableOnFailure(() => deps.connections.get(connectionId));
        if (!connection) throw new NotRegisteredError('unbound');
        authorizeConnection(connection, need);
        return { ...connectionIdentity(connection), consumerTools: connection.consumerTools };
      }
      const kid = heldKid ?? kidOf(token);
      if (kid !== undefined) await unavailableOnFailure(() => deps.keys.get(kid));
      const at = now();
      let claims = verified.get(token, deps.keys.snapshot(), at, leewaySeconds);
      if (!claims) {
        claims = await verifyAccessToken(token, { keys: deps.keys.snapshot(), audience: deps.audience, now: at, leewaySeconds });
        // verifyAccessToken found the kid in the key set, so it is a string.
        verified.remember(token, kid as string, claims);
      }
      const connection = await unavailableOnFailure(() => deps.connections.get(claims.sub));
      authorizeBearer(claims, connection, need);
      const c = connection as ConnectionRecord;
      return { ...connectionIdentity(c), claims, consumerTools: c.consumerTools };
    } catch (err) {
      if (err instanceof BearerRefusal) throw new BearerRefusedError(err);
      throw err;
    }
  };

  return {
    authenticate,
    holdsVerifiedToken: (authorization) => {
      const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
      return token !== undefined && verified.get(token, deps.keys.snapshot(), now(), leewaySeconds) !== undefined;
    },
    authenticateBearer:
      ({ kind }) =>
      async (req: Request, res: Response, next: NextFunction) => {
        const t = (req.params as Record<string, string | undefined>).t;
        res.locals.identity = await authenticate(req.header('authorization'), {
          ...(kind !== undefined ? { kind } : {}),
          ...(t !== undefined ? { tenant: t } : {}),
        });
        next();
      },
  };
}

/**
 * The token of an `Authorization: Bearer …` header; TokenRejectedError otherwise: missing when the
 * request carries no bearer credentials (no header, or another scheme such as Basic), malformed when
 * it carries a bearer token that is not one.
 */
export function bearerTokenOf(authorization: string | undefined): string {
  const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  if (!token) throw new TokenRejectedError(authorization === undefined || !BEARER_SCHEME.test(authorization) ? 'missing' : 'malformed');
  return token;
}
const BEARER_SCHEME = /^Bearer(?: |$)/i;

function kidOf(token: string): string | undefined {
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/** A failed registry read is a 503 whose cause is the read's own error (logged once, by the error middleware). */
export function unavailableOnFailure<T>(read: () => Promise<T>): Promise<T> {
  return unavailableUnlessDone(read, (cause) => new RegistryUnavailableError(cause));
}
