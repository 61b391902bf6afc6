import type { ServerResponse } from 'node:http';
import type { Router, NextFunction, Request, RequestHandler, Response } from 'express';
import type { QueueStats } from '@bus/contracts';
import type { SkillRegistration } from '@bus/db';
import { createRouter, markStep, requestTimings, requestValidation, RequestInvalidError, validatedQuery, type RouteKey } from '@bus/http';
import type { BearerAuthenticator, BearerIdentity } from '@bus/identity';
import { openapi } from '@bus/schemas';
import { ConsumerMismatchError } from './errors';
import { acknowledge, messageRecord, peekRecord, receive, receiveGate, release, type PullDeps } from './pull';

/**
 * Limits of the consumer routes. The ranges and defaults of the parameters and bodies (docs/api.md#limits: up
 * to 10 messages, long poll up to 20 s; up to 10 receipt handles, nack delays up to 900 s) are
 * schemas/openapi/bus.json's, which validates every request (requestValidation below).
 */
export const PULL_LIMITS = {
  bodyBytes: 64 * 1024,
} as const;

/** #/components/schemas/AckRequest and NackRequest, as validated (delay_seconds defaults to 0). */
interface SettleRequest {
  receipt_handles: string[];
  delay_seconds?: number;
}

export interface PullRoutesDeps {
  authenticator: BearerAuthenticator;
  /** The per-connection quota of docs/api.md#limits (libs/identity connectionQuota), shared with publish. */
  connectionQuota: RequestHandler;
  pull: PullDeps;
  /** The skill registrations the portal bound to a consumer connection. */
  registrations(consumerId: string): Promise<SkillRegistration[]>;
  /** The consumer's queue counts: delivery's queue stats, the ones the admin API shows (undefined: nothing un-acked). */
  stats(consumerId: string): Promise<QueueStats | undefined>;
  /** The connection's creation (and last status change); null for no such connection. */
  connectionDates(consumerId: string): Promise<{ createdAt: Date; modifiedAt: Date } | null>;
}

/**
 * GET … (the consumer's state), GET …/messages (long poll), POST …/ack, POST …/nack, GET …/skills under
 * /v1/tenants/{t}/consumers/{c}, with consumer bearer tokens: a producer token is 403
 * producer.not_registered, {t} other than the token's workspace 403 tenant.mismatch (both from
 * authenticateBearer), {c} other than the token's own connection 403 consumer.mismatch. Then the
 * consumer connection's quota (docs/api.md#limits: each connection on /v1/tenants/{t}/...), before any body is read.
 */
const CONSUMER_PATH = '/v1/tenants/:t/consumers/:c';

/**
 * Aborted when the client hangs up before its answer was written, so its long poll stops instead of
 * leasing what comes next for nobody. An answer's own close aborts nothing: each abort builds a
 * DOMException with its stack, a few percent of every receive's CPU.
 */
export function hangUpSignal(res: ServerResponse): AbortSignal {
  const hungUp = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) hungUp.abort();
  });
  return hungUp.signal;
}

/**
 * The consumer routes: each authenticates and then counts the connection quota, so the host's limits
 * of a request for one of them can be counted in the quota's Redis call (libs/identity hostLimitsWithQuota).
 */
export const CONSUMER_QUOTA_ROUTES: readonly RouteKey[] = [
  { method: 'GET', path: CONSUMER_PATH },
  { method: 'GET', path: `${CONSUMER_PATH}/messages` },
  { method: 'GET', path: `${CONSUMER_PATH}/peek` },
  { method: 'POST', path: `${CONSUMER_PATH}/ack` },
  { method: 'POST', path: `${CONSUMER_PATH}/nack` },
  { method: 'GET', path: `${CONSUMER_PATH}/skills` },
];

export function pullRoutes(deps: PullRoutesDeps): Router {
  const router = createRouter();
  const consumer = deps.authenticator.authenticateBearer({ kind: 'consumer' });
  const ownConsumer = (req: Request, res: Response, next: NextFunction) => {
    if ((res.locals.identity as BearerIdentity).clientId !== req.params.c) throw new ConsumerMismatchError();
    next();
  };
  const base = CONSUMER_PATH;
  // Checked against the served document once the caller and its quota are known, before any body is read.
  const requests = requestValidation(openapi.bus, (problem) => new RequestInvalidError(problem));
  // Server-Timing steps (docs/delivery.md, "Server-Timing of the consumer routes"): auth, quota and
  // validate here; each route adds body (ack, nack) and queue (its Postgres work, a long poll's wait included).
  const guards = [consumer, ownConsumer, markStep('auth'), deps.connectionQuota, markStep('quota'), requests.parameters, markStep('validate')];

  // Readiness (docs/testing-tools.md#consumer-readiness): the queue exists from the connection's creation, so
  // a 200 here means a message published from now on is delivered to this consumer.
  router.get(base, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const identity = res.locals.identity as BearerIdentity;
    const [stats, dates] = await Promise.all([deps.stats(consumerId), deps.connectionDates(consumerId)]);
    requestTimings(res).mark('queue');
    // bus.json's ConsumerState; status is always active: another connection is refused before the route.
    res.json({
      consumer_id: consumerId,
      workspace_id: identity.workspaceId,
      status: 'active',
      created_at: dates ? dates.createdAt.toISOString() : null,
      queue: {
        depth: stats?.depth ?? 0,
        visible: stats?.visible ?? 0,
        in_flight: stats?.inFlight ?? 0,
        delayed: stats?.delayed ?? 0,
        dead_letters: stats?.deadLetters ?? 0,
        oldest_age_seconds: stats ? Math.max(0, (Date.now() - stats.oldestEnqueuedAt.getTime()) / 1000) : null,
      },
    });
  });

  router.get(`${base}/messages`, ...guards, async (req: Request, res: Response) => {
    // HEAD comes here as GET, authenticated, counted and checked as one, and answers at once without
    // leasing: messages leased into an answer that has no body would be lost to every receiver for
    // their visibility timeout.
    if (req.method === 'HEAD') {
      res.type('json').end();
      return;
    }
    const consumerId = String(req.params.c);
    const query = validatedQuery(req);
    const messages = await receive(deps.pull, consumerId, {
      maxMessages: Number(query.max_messages),
      waitMs: Number(query.wait_seconds) * 1000,
      visibilityMs: Number(query.visibility_timeout) * 1000,
      signal: hangUpSignal(res),
      tools: (res.locals.identity as BearerIdentity).consumerTools,
    });
    requestTimings(res).mark('queue');
    res.json({ messages: messages.map((m) => messageRecord(deps.pull, consumerId, m)) });
  });

  // Peek (docs/testing-tools.md): what a receive would lease now, in its order, leasing nothing.
  router.get(`${base}/peek`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const query = validatedQuery(req);
    const filter = {
      ...(typeof query.message_type === 'string' ? { messageType: query.message_type } : {}),
      ...(typeof query.correlation_id === 'string' ? { correlationId: query.correlation_id } : {}),
    };
    const gate = receiveGate((res.locals.identity as BearerIdentity).consumerTools);
    const { messages, truncated } = await deps.pull.tools.peek(consumerId, Number(query.max_messages), filter, gate);
    requestTimings(res).mark('queue');
    res.json({ messages: messages.map((m) => peekRecord(deps.pull, consumerId, m)), truncated });
  });

  router.post(`${base}/ack`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const body = (await requests.jsonBody(req, PULL_LIMITS.bodyBytes)) as SettleRequest;
    requestTimings(res).mark('body');
    const results = await acknowledge(deps.pull, consumerId, body.receipt_handles, (res.locals.identity as BearerIdentity).consumerTools);
    requestTimings(res).mark('queue');
    res.json({ results });
  });

  router.post(`${base}/nack`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const body = (await requests.jsonBody(req, PULL_LIMITS.bodyBytes)) as SettleRequest;
    requestTimings(res).mark('body');
    const results = await release(deps.pull, consumerId, body.receipt_handles, (body.delay_seconds ?? 0) * 1000);
    requestTimings(res).mark('queue');
    res.json({ results });
  });

  router.get(`${base}/skills`, ...guards, async (req: Request, res: Response) => {
    res.json({ registrations: await deps.registrations(String(req.params.c)) });
  });
  return router;
}
