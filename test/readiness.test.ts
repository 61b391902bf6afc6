import { startBus, startOwnRedis, type RunningBus } from './support/bus';

async function readiness(bus: RunningBus): Promise<{ status: number; body: { ready: boolean; checks: Record<string, string> } }> {
  const res = await fetch(`${bus.busUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as { ready: boolean; checks: Record<string, string> } };
}

/** /readyz is polled: Redis' loss is noticed by the next ping, its return by the client's reconnect. */
async function until(bus: RunningBus, status: number): Promise<{ status: number; body: { ready: boolean; checks: Record<string, string> } }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await readiness(bus);
    if (r.status === status || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('/readyz follows Redis', () => {
  it('turns unready when Redis stops and ready again when it is back, without a restart', async () => {
    let redis = await startOwnRedis();
    const bus = await startBus({ REDIS_URL: redis.url });
    try {
      expect(await until(bus, 200)).toEqual({ status: 200, body: { ready: true, checks: { postgres: 'ok', redis: 'ok', kafka: 'ok' } } });

      await redis.stop();
      const down = await until(bus, 503);
      expect(down.status).toBe(503);
      expect(down.body.ready).toBe(false);
      expect(down.body.checks.redis).not.toBe('ok');
      expect(down.body.checks.postgres).toBe('ok');
      // Liveness is not readiness: the process is alive and says so.
      expect((await fetch(`${bus.busUrl}/healthz`)).status).toBe(200);

      redis = await startOwnRedis(redis.port);
      expect(await until(bus, 200)).toEqual({ status: 200, body: { ready: true, checks: { postgres: 'ok', redis: 'ok', kafka: 'ok' } } });
    } finally {
      await bus.stop();
      await redis.stop();
    }
  }, 60_000);
});
