import type { Router, NextFunction, Request, RequestHandler, Response } from 'express';
import { ijsonProblemText, parseIJson } from '@bus/contracts';
import { createRouter, HttpError, RequestInvalidError } from '@bus/http';
import {
  BearerRefusedError,
  connectionIdentity,
  createSigV4Verifier,
  signedRouteSteps,
  unavailableOnFailure,
  type ConnectionCache,
  type PrincipalStore,
  type SigningKey,
  type SigningPrincipal,
} from '@bus/identity';
import { authorizeConnection, BearerRefusal, CHALLENGE_PATTERN, NotRegisteredError, type ConnectionKind } from '@bus/tokens';
import type { ManagedApp } from './managed-apps';
import { managedAppIdentity } from './managed-auth';
import { MAX_MESSAGE_BYTES } from './publish-routes';

/** AWS's service name for API Gateway-style routes: the scope every publish route's signature names. */
export const PUBLISH_SIGNING_SERVICE = 'execute-api';

/** A principals/verify body is one challenge: a few dozen bytes. */
const VERIFY_BODY_BYTES = 4 * 1024;

export interface SignedRoutesDeps {
  principals: Pick<PrincipalStore, 'signingPrincipal' | 'verify'>;
  /** The identity's connection cache: a connection's revocation reaches it through the control topic. */
  connections: Pick<ConnectionCache, 'get'>;
  /** All AWS-signed requests together (libs/identity signedRequestLimit), instead of the per-connection quota. */
  limit: RequestHandler;
  /** AWS_SIGV4_REGION. */
  region: string;
  /** AWS_SIGV4_MAX_SKEW. */
  maxSkewMs: number;
  /** MANAGED_APPS_FILE's apps: those with an `aws` entry sign POST /v1/messages with its access key. */
  managedApps: readonly ManagedApp[];
  now?: () => Date;
}

/** An operator-managed app's access key: its secret comes from the configuration, never from the principals' table. */
interface ManagedAppKey extends SigningKey {
  app: ManagedApp;
}

/** 403 principal.challenge_invalid: not the principal's outstanding challenge (unknown, used, expired, or already verified). */
export class ChallengeInvalidError extends HttpError {
  override readonly name = 'ChallengeInvalidError';
  constructor() {
    super(
      403,
      'principal.challenge_invalid',
      "The challenge is not this principal's outstanding one: unknown, already used, or expired. Ask the operator for a new one",
    );
  }
}

export interface SignedRoutes {
  /** /iam/messages and /iam/validate: signature, the signed routes' limit, then the body in res.locals.body and the caller in res.locals.identity. */
  publishSteps: RequestHandler[];
  /** POST /v1/tenants/{t}/principals/verify. */
  verifyRouter: Router;
  /** POST /v1/messages: as publishSteps, the caller an operator-managed app by its configured access key. */
  managedSteps: RequestHandler[];
}

/**
 * The AWS-signed routes of the gateway (docs/auth.md, "AWS SigV4"): libs/identity's verifier, over
 * the registered principals' access keys for the tenant routes, and over the operator-managed apps'
 * configured keys for POST /v1/messages; one shared limit for all. A signed
 * request then meets exactly the bearer routes' rules 3–4 on the principal's connection: active, of
 * the route's kind, path {t} = its workspace (a managed app: its configured connection, app and workspace).
 */
export function signedRoutes(deps: SignedRoutesDeps): SignedRoutes {
  const scope = {
    region: deps.region,
    service: PUBLISH_SIGNING_SERVICE,
    maxSkewMs: deps.maxSkewMs,
    ...(deps.now ? { now: deps.now } : {}),
  };
  const verifier = createSigV4Verifier<SigningPrincipal>({ ...scope, resolve: (accessKeyId) => deps.principals.signingPrincipal(accessKeyId) });
  const managedKeys = new Map<string, ManagedAppKey>();
  for (const app of deps.managedApps) {
    if (app.auth.kind === 'aws') managedKeys.set(app.auth.accessKeyId, { secretAccessKey: app.auth.secretAccessKey, revoked: false, app });
  }
  const managedVerifier = createSigV4Verifier<ManagedAppKey>({ ...scope, resolve: (accessKeyId) => Promise.resolve(managedKeys.get(accessKeyId)) });
  const { limit } = deps;

  /** Rules 3–4 on the principal's connection; `verified`: only a verified principal may use the route. */
  const authorize = (need: { kind?: ConnectionKind; verified: boolean }) => (principal: SigningPrincipal, req: Request, res: Response) =>
    answeringRefusals(async () => {
      if (need.verified && principal.status !== 'verified') throw new NotRegisteredError('principal_unverified');
      const connection = await unavailableOnFailure(() => deps.connections.get(principal.connectionId));
      if (!connection) throw new NotRegisteredError('not_active');
      authorizeConnection(connection, { ...(need.kind ? { kind: need.kind } : {}), tenant: String(req.params.t) });
      res.locals.identity = connectionIdentity(connection);
    });
  // A managed app's workspace is the configuration's: the path has none to compare.
  const authorizeManaged = ({ app }: ManagedAppKey, _req: Request, res: Response) =>
    answeringRefusals(async () => {
      res.locals.identity = await managedAppIdentity(app, deps.connections);
    });

  const verifyRouter = createRouter();
  verifyRouter.post(
    '/v1/tenants/:t/principals/verify',
    // A pending principal signs it, of a producer or a consumer connection.
    ...signedRouteSteps({ verifier, authorize: authorize({ verified: false }), limit, maxBodyBytes: VERIFY_BODY_BYTES }),
    async (_req: Request, res: Response, _next: NextFunction) => {
      const challenge = challengeOf(res.locals.body as Buffer);
      const { key } = res.locals.signed as { key: SigningPrincipal };
      const verified = await unavailableOnFailure(() => deps.principals.verify(key.accessKeyId, challenge));
      if (!verified) throw new ChallengeInvalidError();
      res.json({
        access_key_id: verified.access_key_id,
        client_id: verified.client_id,
        role_arn: verified.role_arn,
        status: verified.status,
        verified_at: verified.verified_at,
      });
    },
  );

  return {
    publishSteps: signedRouteSteps({ verifier, authorize: authorize({ kind: 'producer', verified: true }), limit, maxBodyBytes: MAX_MESSAGE_BYTES }),
    verifyRouter,
    managedSteps: signedRouteSteps({ verifier: managedVerifier, authorize: authorizeManaged, limit, maxBodyBytes: MAX_MESSAGE_BYTES }),
  };
}

/** Rules 3–4's refusals (BearerRefusal) answered as the bearer routes answer them. */
async function answeringRefusals(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    if (err instanceof BearerRefusal) throw new BearerRefusedError(err);
    throw err;
  }
}

/** `{ "challenge": "sbc_…" }` and nothing else; anything else is 400 request.invalid. */
function challengeOf(body: Buffer): string {
  const read = parseIJson(body);
  if (!read.ok) throw new RequestInvalidError(`The body must be JSON: { "challenge": "sbc_…" } (${ijsonProblemText(read.problem)})`);
  const parsed = read.value;
  const keys = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.keys(parsed) : [];
  const challenge = (parsed as { challenge?: unknown } | null)?.challenge;
  if (keys.length !== 1 || typeof challenge !== 'string' || !CHALLENGE_PATTERN.test(challenge)) {
    throw new RequestInvalidError('The body must be { "challenge": "sbc_…" } with the challenge the operator issued, and nothing else');
  }
  return challenge;
}
