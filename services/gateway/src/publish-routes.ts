import type { Router, NextFunction, Request, RequestHandler, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import { METRICS, type ActivityRecorder } from '@bus/observability';
import { createRouter, HttpError, markStep, readBody, requestTimings, type RouteKey } from '@bus/http';
import type { BearerAuthenticator, ConnectionIdentity, ConnectionUse } from '@bus/identity';
import { rulesCatalogue } from '@bus/som';
import { publishMessage, type PublishDeps, type PublishMode } from './publish';
import { publishOverHttp } from './publish-http';
import type { RefusalRecorder } from './refusal-recorder';

/** docs/api.md#som-message: one SOM message of at most 240,000 bytes. */
export const MAX_MESSAGE_BYTES = 240_000;

const PUBLISH_PATH = '/v1/tenants/:t/messages';
const VALIDATE_PATH = '/v1/tenants/:t/validate';

/**
 * The bearer routes that authenticate and then count the connection quota: the host's limits of a
 * request for one of them can be counted in the quota's Redis call (libs/identity hostLimitsWithQuota).
 */
export const PUBLISH_QUOTA_ROUTES: readonly RouteKey[] = [
  { method: 'POST', path: PUBLISH_PATH },
  { method: 'POST', path: VALIDATE_PATH },
];

export interface PublishRoutesDeps {
  authenticator: BearerAuthenticator;
  /** The per-connection quota of docs/api.md#limits (libs/identity connectionQuota), shared with the consumer routes. */
  connectionQuota: RequestHandler;
  publish: PublishDeps;
  /** The process registry: bus_publish_total{mode,outcome,rule} is counted there. */
  metrics: Registry;
  /** Recent refusals: told of every refusal answer and accepted validate; it queues and returns at once. */
  refusals: Pick<RefusalRecorder, 'refused' | 'validated'>;
  /** The portal's per-minute activity: each accepted publish and each publish refusal of a known producer, counted in memory. */
  activity: Pick<ActivityRecorder, 'published' | 'refused'>;
  /**
   * The AWS-signed twins /iam/messages and /iam/validate (signed-routes.ts): signature, the signed
   * routes' shared limit, then the body in res.locals.body and the caller in res.locals.identity.
   */
  signedSteps: RequestHandler[];
  /** POST /v1/messages's steps as signedSteps', the caller an operator-managed app by its configured access key. */
  managedSignedSteps: RequestHandler[];
  /** Authenticates POST /v1/jwt/messages: an operator-managed app's token (managed-auth.ts). */
  managedAppAuth: RequestHandler;
  /** The caller's connection was used: its last_used_at (to the minute, never a write per request). */
  connectionUse: ConnectionUse;
}

/**
 * POST /v1/tenants/{t}/messages and /validate (bearer tokens: the bus's, or a bound identity
 * provider's), their AWS-signed twins under /iam/, POST /v1/jwt/messages and POST /v1/messages
 * (operator-managed apps' tokens and AWS signatures) and GET /v1/rules. The order per request is docs/architecture.md#data-flow: authenticate from headers, the
 * connection's quota (the signed routes' shared limit instead), then read the body (at most 240,000
 * bytes) and run the one pipeline. Nothing reads the body before the limits passed.
 */
export function publishRoutes(deps: PublishRoutesDeps): Router {
  const router = createRouter();
  const producer = deps.authenticator.authenticateBearer({ kind: 'producer' });
  const published = new Counter({
    ...METRICS.publish,
    help: 'Publish and validate requests by outcome and the rule of the first refusing violation',
    registers: [deps.metrics],
  });
  // The outcomes without a refusing rule exist from the start, at 0, so that the dashboard's rate()
  // counts a process's first accepted message; a refusal's rule is not known before it happens.
  for (const mode of ['publish', 'validate'] as const) for (const outcome of ['accepted', 'duplicate']) published.inc({ mode, outcome, rule: 'none' }, 0);
  // Counts every answer of the route, refusals before the body included; the rule comes from the
  // error the route threw (recorded below), `none` for an accepted message or a duplicate.
  const observe = (mode: PublishMode) => (_req: Request, res: Response, next: NextFunction) => {
    res.on('finish', () => {
      const status = res.statusCode;
      const outcome = status === 202 ? 'accepted' : status === 200 ? 'duplicate' : status < 500 ? 'refused' : 'error';
      const rule = (res.locals.refusedRule as string | undefined) ?? 'none';
      published.inc({ mode, outcome, rule });
      const identity = res.locals.identity as ConnectionIdentity | undefined;
      if (mode === 'publish' && identity) {
        if (outcome === 'accepted') deps.activity.published(identity.clientId);
        else if (outcome === 'refused') deps.activity.refused(identity.clientId, rule);
      }
    });
    next();
  };

  const readMessage = async (req: Request, res: Response, next: NextFunction) => {
    res.locals.body = await readBody(req, MAX_MESSAGE_BYTES);
    next();
  };
  const handle = (mode: PublishMode) => async (_req: Request, res: Response) => {
    const identity = res.locals.identity as ConnectionIdentity;
    void deps.connectionUse.used(identity.clientId);
    const timings = requestTimings(res);
    const bytes = res.locals.body as Buffer;
    res.locals.publishBody = bytes;
    const answer = await publishOverHttp(
      publishMessage(deps.publish, { clientId: identity.clientId, workspaceId: identity.workspaceId, appId: identity.appId }, bytes, mode, timings),
    );
    res.status(answer.status).json(answer.body);
    // A test run's report lists accepted validates, which store nothing otherwise (docs/testing-tools.md#test-runs).
    if (mode === 'validate' && answer.status === 202) deps.refusals.validated({ identity, body: bytes });
  };

  const bearer = [producer, markStep('auth'), deps.connectionQuota, markStep('quota'), readMessage, markStep('body')];
  const signed = [...deps.signedSteps, markStep('body')];
  // An operator-managed app: its workspace is the configuration's, so the path has none.
  const managed = [deps.managedAppAuth, markStep('auth'), deps.connectionQuota, markStep('quota'), readMessage, markStep('body')];
  router.post(PUBLISH_PATH, observe('publish'), ...bearer, handle('publish'));
  router.post(VALIDATE_PATH, observe('validate'), ...bearer, handle('validate'));
  router.post('/v1/tenants/:t/iam/messages', observe('publish'), ...signed, handle('publish'));
  router.post('/v1/tenants/:t/iam/validate', observe('validate'), ...signed, handle('validate'));
  router.post('/v1/jwt/messages', observe('publish'), ...managed, handle('publish'));
  router.post('/v1/messages', observe('publish'), ...deps.managedSignedSteps, markStep('body'), handle('publish'));
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    res.locals.refusedRule = err instanceof HttpError ? err.rule : 'internal.error';
    deps.refusals.refused({
      identity: res.locals.identity as ConnectionIdentity | undefined,
      mode: req.path.endsWith('/validate') ? 'validate' : 'publish',
      body: res.locals.publishBody as Buffer | undefined,
      error: err,
    });
    next(err);
  });

  const catalogue = rulesCatalogue();
  router.get('/v1/rules', (_req, res) => {
    res.json(catalogue);
  });
  return router;
}
