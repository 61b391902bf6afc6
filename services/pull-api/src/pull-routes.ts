import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { SkillRegistration } from '@bus/db';
import { readBody } from '@bus/http';
import type { BearerAuthenticator, BearerIdentity } from '@bus/identity';
import { ConsumerMismatchError, PullRequestInvalidError } from './errors';
import { messageRecord, receive, settle, type PullDeps } from './pull';

/** Limits of the consumer routes (spec §8: up to 10 messages, long poll up to 20 s). */
export const PULL_LIMITS = {
  maxMessages: { min: 1, max: 10, default: 10 },
  waitSeconds: { min: 0, max: 20, default: 20 },
  visibilityTimeout: { min: 1, max: 43_200, default: 30 },
  delaySeconds: { min: 0, max: 900, default: 0 },
  receiptHandles: { min: 1, max: 10 },
  bodyBytes: 64 * 1024,
} as const;

export interface PullRoutesDeps {
  authenticator: BearerAuthenticator;
  /** The per-connection quota of spec §8 (libs/identity connectionQuota), shared with publish. */
  connectionQuota: RequestHandler;
  pull: PullDeps;
  /** The skill registrations the portal bound to a consumer connection. */
  registrations(consumerId: string): Promise<SkillRegistration[]>;
}

/**
 * GET …/messages (long poll), POST …/ack, POST …/nack, GET …/skills under
 * /v1/tenants/{t}/consumers/{c}, with consumer bearer tokens: a producer token is 403
 * producer.not_registered, {t} other than the token's workspace 403 tenant.mismatch (both from
 * authenticateBearer), {c} other than the token's own connection 403 consumer.mismatch. Then the
 * consumer connection's quota (spec §8: each connection on /v1/tenants/{t}/...), before any body is read.
 */
export function pullRoutes(deps: PullRoutesDeps): Router {
  const router = Router();
  const consumer = deps.authenticator.authenticateBearer({ kind: 'consumer' });
  const ownConsumer = (req: Request, res: Response, next: NextFunction) => {
    if ((res.locals.identity as BearerIdentity).clientId !== req.params.c) throw new ConsumerMismatchError();
    next();
  };
  const base = '/v1/tenants/:t/consumers/:c';
  const guards = [consumer, ownConsumer, deps.connectionQuota];

  router.get(`${base}/messages`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const maxMessages = intParam(req, 'max_messages', PULL_LIMITS.maxMessages);
    const waitSeconds = intParam(req, 'wait_seconds', PULL_LIMITS.waitSeconds);
    const visibility = intParam(req, 'visibility_timeout', PULL_LIMITS.visibilityTimeout);
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const messages = await receive(deps.pull, consumerId, {
      maxMessages,
      waitMs: waitSeconds * 1000,
      visibilityMs: visibility * 1000,
      signal: aborted.signal,
    });
    res.json({ messages: messages.map((m) => messageRecord(deps.pull, consumerId, m)) });
  });

  router.post(`${base}/ack`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const body = await settleBody(req, false);
    const results = await settle(deps.pull, consumerId, body.handles, (leases) => deps.pull.store.ack(consumerId, leases));
    res.json({ results });
  });

  router.post(`${base}/nack`, ...guards, async (req: Request, res: Response) => {
    const consumerId = String(req.params.c);
    const body = await settleBody(req, true);
    const results = await settle(deps.pull, consumerId, body.handles, (leases) => deps.pull.store.nack(consumerId, leases, body.delaySeconds * 1000));
    deps.pull.notifier.notifyLocal(consumerId);
    res.json({ results });
  });

  router.get(`${base}/skills`, ...guards, async (req: Request, res: Response) => {
    res.json({ registrations: await deps.registrations(String(req.params.c)) });
  });
  return router;
}

function intParam(req: Request, name: string, range: { min: number; max: number; default: number }): number {
  const raw = req.query[name];
  if (raw === undefined) return range.default;
  if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw)) throw new PullRequestInvalidError(`${name} must be an integer from ${range.min} to ${range.max}`);
  const value = Number(raw);
  if (value < range.min || value > range.max) throw new PullRequestInvalidError(`${name} must be an integer from ${range.min} to ${range.max}`);
  return value;
}

async function settleBody(req: Request, allowDelay: boolean): Promise<{ handles: string[]; delaySeconds: number }> {
  const bytes = await readBody(req, PULL_LIMITS.bodyBytes);
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new PullRequestInvalidError('The body must be JSON: { "receipt_handles": [...] }');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new PullRequestInvalidError('The body must be a JSON object');
  const { receipt_handles: handles, delay_seconds: delay, ...rest } = body as Record<string, unknown>;
  const allowed = allowDelay ? '"receipt_handles" and "delay_seconds"' : '"receipt_handles"';
  if (Object.keys(rest).length > 0 || (!allowDelay && delay !== undefined)) throw new PullRequestInvalidError(`The body takes only ${allowed}`);
  const { min, max } = PULL_LIMITS.receiptHandles;
  if (!Array.isArray(handles) || handles.length < min || handles.length > max || !handles.every((h) => typeof h === 'string')) {
    throw new PullRequestInvalidError(`receipt_handles must be an array of ${min} to ${max} strings`);
  }
  const d = PULL_LIMITS.delaySeconds;
  if (delay !== undefined && (typeof delay !== 'number' || !Number.isInteger(delay) || delay < d.min || delay > d.max)) {
    throw new PullRequestInvalidError(`delay_seconds must be an integer from ${d.min} to ${d.max}`);
  }
  return { handles: handles as string[], delaySeconds: (delay as number | undefined) ?? d.default };
}
