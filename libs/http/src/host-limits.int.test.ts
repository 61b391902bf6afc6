import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { Router, type NextFunction, type Request, type Response } from 'express';
import pino from 'pino';
import { busRequestLimits, createConnectionQuotas, createRedis, SPEC_BUS_REQUEST_LIMITS, takeDeferredHostLimits, type Redis } from '@bus/limits';
import { createMetricsRegistry } from '@bus/observability';
import { eventually, requireEnv } from '@bus/testing';
import { createHttpApp, createRequestMetrics, HttpError, routeMatcher, serve, violationBody, type RunningServer } from './index';

const logger = pino({ level: 'silent' });

class NotAllowedHereError extends HttpError {
  constructor() {
    super(401, 'producer.unauthenticated', 'no', 'policy');
  }
}

/**
 * An app with the bus host's limits and routes standing for the bearer routes: /v1/counted/:who
 * authenticates (a `deny` header refuses it with 401) and then counts the caller's connection quota
 * with whatever host limits were left to it; /v1/thing answers at once. `countWithQuota` says which
 * requests leave their host limits to the quota step.
 */
async function startApp(
  redis: Redis,
  settings: Parameters<typeof busRequestLimits>[1],
  opts: { countWithQuota?: (req: Request) => boolean; logger?: pino.Logger } = {},
): Promise<RunningServer> {
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const quotas = createConnectionQuotas(redis);
  const router = Router();
  router.get('/v1/thing', (_req, res) => {
    res.json({ ok: true });
  });
  router.get(
    '/v1/counted/:who',
    (req: Request, _res: Response, next: NextFunction) => {
      if (req.header('deny') !== undefined) throw new NotAllowedHereError();
      next();
    },
    async (req: Request, res: Response) => {
      const decision = await quotas.consume(String(req.params.who), { perSecond: 1000, burst: 1000, perDay: 1000 }, undefined, takeDeferredHostLimits(res));
      res.json({ allowed: decision.allowed });
    },
  );
  const app = createHttpApp({
    name: 'limits-test',
    logger: opts.logger ?? logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    middleware: [busRequestLimits(redis, settings, undefined, opts.countWithQuota)],
    routers: [router],
  });
  return serve(app, { host: '127.0.0.1', port: 0, logger });
}

/** How many requests of connection `who` its per-second window counted (the key rate-limiter-flexible uses). */
async function connectionCount(redis: Redis, who: string): Promise<number> {
  return Number((await redis.get(`limit:conn-rate:${who}`)) ?? 0);
}

async function connected(prefix: string): Promise<Redis> {
  const redis = createRedis(requireEnv('REDIS_URL'), logger, { keyPrefix: prefix });
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
}

describe('bus host limits', () => {
  it('are docs/api.md#limits by default', () => {
    expect(SPEC_BUS_REQUEST_LIMITS).toEqual({ perAddressPerMinute: 600, apiPerSecond: 200, apiBurst: 400 });
  });

  it('refuse a source address past its limit with 429 rate.limited and Retry-After, never the ops routes', async () => {
    const redis = await connected(`t-${randomBytes(4).toString('hex')}`);
    const server = await startApp(redis, { perAddressPerMinute: 3, apiPerSecond: 1000, apiBurst: 1000 });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await fetch(`${server.url}/v1/thing`)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const refused = await fetch(`${server.url}/v1/thing`);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await refused.json()).toEqual({
        accepted: false,
        violations: [{ source: 'policy', rule: 'rate.limited', message: expect.stringMatching(/retry after \d+ s/) }],
      });
      // Unknown routes count too ("any route"); probes and scrapes never do.
      expect((await fetch(`${server.url}/v1/nothing`)).status).toBe(429);
      for (const ops of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${server.url}${ops}`)).status).toBe(200);
    } finally {
      await server.close(1000);
      redis.disconnect();
    }
  });

  it('count across processes sharing a Redis prefix, and not across prefixes', async () => {
    const prefix = `t-${randomBytes(4).toString('hex')}`;
    const [a, b, other] = [await connected(prefix), await connected(prefix), await connected(`${prefix}-other`)];
    const settings = { perAddressPerMinute: 1000, apiPerSecond: 2, apiBurst: 2 };
    const servers = [await startApp(a, settings), await startApp(b, settings), await startApp(other, settings)];
    try {
      const [first, second, third] = servers as [RunningServer, RunningServer, RunningServer];
      const statuses = [
        (await fetch(`${first.url}/v1/thing`)).status,
        (await fetch(`${second.url}/v1/thing`)).status,
        (await fetch(`${first.url}/v1/thing`)).status,
      ];
      expect(statuses).toEqual([200, 200, 429]);
      expect((await fetch(`${third.url}/v1/thing`)).status).toBe(200);
    } finally {
      await Promise.all(servers.map((s) => s.close(1000)));
      for (const r of [a, b, other]) r.disconnect();
    }
  });

  describe('left to a connection quota (countWithQuota)', () => {
    const counted = routeMatcher([{ method: 'GET', path: '/v1/counted/:who' }]);
    const limits = { perAddressPerMinute: 3, apiPerSecond: 1000, apiBurst: 1000 };

    it('are counted in the quota step first: the same 429 at the same count, the connection not counted when they refuse', async () => {
      const redis = await connected(`t-${randomBytes(4).toString('hex')}`);
      const server = await startApp(redis, limits, { countWithQuota: counted });
      try {
        const answers = [];
        for (let i = 0; i < 4; i++) answers.push(await fetch(`${server.url}/v1/counted/c1`));
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
        const refused = answers[3] as globalThis.Response;
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(await refused.json()).toEqual({
          accepted: false,
          violations: [{ source: 'policy', rule: 'rate.limited', message: expect.stringMatching(/^Too many requests; retry after \d+ s$/) }],
        });
        // The refused request stopped at the address: its connection's window holds the three allowed.
        expect(await connectionCount(redis, 'c1')).toBe(3);
        // Requests counted at once share the same windows.
        expect((await fetch(`${server.url}/v1/thing`)).status).toBe(429);
      } finally {
        await server.close(1000);
        redis.disconnect();
      }
    });

    it('are counted before a refusal that comes first (authentication): past the limit the answer is their 429', async () => {
      const redis = await connected(`t-${randomBytes(4).toString('hex')}`);
      const server = await startApp(redis, limits, { countWithQuota: counted });
      try {
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await fetch(`${server.url}/v1/counted/c1`, { headers: { deny: 'yes' } })).status);
        expect(statuses).toEqual([401, 401, 401, 429]);
        expect(await connectionCount(redis, 'c1')).toBe(0);
      } finally {
        await server.close(1000);
        redis.disconnect();
      }
    });

    it('are counted after the answer of a route that never reached its quota step, and the process says so', async () => {
      const redis = await connected(`t-${randomBytes(4).toString('hex')}`);
      const lines: string[] = [];
      const logged = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
      // A predicate that wrongly claims /v1/thing, which answers without any quota step.
      const server = await startApp(redis, limits, { countWithQuota: () => true, logger: logged });
      try {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await fetch(`${server.url}/v1/thing`)).status);
        expect(statuses).toEqual([200, 200, 200]);
        await eventually(
          () => redis.get('limit:bus-address:127.0.0.1'),
          (count) => count === '3',
          { what: 'the three answered requests counted' },
        );
        expect(lines.filter((l) => l.includes('host limits counted after the answer'))).toHaveLength(3);
      } finally {
        await server.close(1000);
        redis.disconnect();
      }
    });
  });
});
