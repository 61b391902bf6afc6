import { randomUUID } from 'node:crypto';
import { som } from '@bus/schemas';
import { eventually } from '@bus/testing';
import { startBus, startOwnRedis, type RunningBus } from './support/bus';
import { TenantFixture } from './support/tenants';

type Readiness = { status: number; body: { ready: boolean; checks: Record<string, string> } };

async function readiness(bus: RunningBus): Promise<Readiness> {
  const res = await fetch(`${bus.busUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as Readiness['body'] };
}

/** /readyz is polled: Redis' loss is noticed by the next ping, its return by the client's reconnect. */
function until(bus: RunningBus, redisCheck: (value: string | undefined) => boolean): Promise<Readiness> {
  return eventually(
    () => readiness(bus),
    (r) => redisCheck(r.body.checks.redis),
    { timeoutMs: 15_000, intervalMs: 200, what: "/readyz's redis check" },
  );
}

describe('/readyz and the limits follow Redis', () => {
  it('stays ready and keeps answering on in-process limits while Redis is down, and says so', async () => {
    let redis = await startOwnRedis();
    const bus = await startBus({ REDIS_URL: redis.url });
    const tenants = await TenantFixture.create(bus);
    try {
      const tenant = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: ['story.context'] });
      const all = { ready: true, checks: { postgres: 'ok', redis: 'ok', kafka: 'ok', 'control-topic': 'ok' } };
      expect(await until(bus, (r) => r === 'ok')).toEqual({ status: 200, body: all });

      await redis.stop();
      const down = await until(bus, (r) => r !== 'ok');
      expect(down.status).toBe(200);
      expect(down.body.ready).toBe(true);
      expect(down.body.checks.redis).toMatch(/^degraded: /);

      // Every limit on the way (host, token URL, connection quota) decides in process now.
      const token = await tenants.token(tenant.producer);
      const message = { ...(som.examples['story.context'] as Record<string, unknown>), message_id: randomUUID(), occurred_at: new Date().toISOString() };
      const published = await fetch(`${bus.busUrl}/v1/tenants/${tenant.workspaceId}/messages`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(message),
      });
      expect(published.status).toBe(202);
      const metrics = await (await fetch(`${bus.busUrl}/metrics`)).text();
      for (const limit of ['address', 'api_global', 'token_global', 'connection_second', 'connection_day']) {
        expect(metrics).toMatch(new RegExp(`^bus_rate_limiter_fallback_total\\{app="all-in-one",limit="${limit}"\\} [1-9]`, 'm'));
      }

      redis = await startOwnRedis(redis.port);
      expect(await until(bus, (r) => r === 'ok')).toEqual({ status: 200, body: all });
    } finally {
      await tenants.close();
      await bus.stop();
      await redis.stop();
    }
  }, 60_000);
});
