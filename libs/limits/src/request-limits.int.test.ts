import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import pino from 'pino';
import { createHttpApp, createRequestMetrics, serve, violationBody, type RunningServer } from '@bus/http';
import { createMetricsRegistry } from '@bus/observability';
import { requireEnv } from '@bus/testing';
import { busRequestLimits, createRedis, SPEC_BUS_REQUEST_LIMITS, type Redis } from './index';

const logger = pino({ level: 'silent' });

async function startApp(redis: Redis, settings: Parameters<typeof busRequestLimits>[1]): Promise<RunningServer> {
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const router = Router();
  router.get('/v1/thing', (_req, res) => {
    res.json({ ok: true });
  });
  const app = createHttpApp({
    name: 'limits-test',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    middleware: [busRequestLimits(redis, settings)],
    routers: [router],
  });
  return serve(app, { host: '127.0.0.1', port: 0, logger });
}

async function connected(prefix: string): Promise<Redis> {
  const redis = createRedis(requireEnv('REDIS_URL'), logger, { keyPrefix: prefix });
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
}

describe('bus host limits', () => {
  it('are spec §8 by default', () => {
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
});
