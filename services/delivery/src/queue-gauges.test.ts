import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import type { QueueStats } from '@bus/contracts';
import { createLogger } from '@bus/observability';
import type { DeliveryStore } from '@bus/queue';
import { registerQueueGauges } from './queue-gauges';

const ENQUEUED_AT = new Date('2026-11-30T12:00:00Z');

afterEach(() => jest.useRealTimers());

it('serves the last read, the oldest age still growing, and one warning per 10 s while Postgres cannot be read', async () => {
  jest.useFakeTimers({ now: new Date('2026-11-30T12:10:00Z') });
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: 'delivery',
    level: 'info',
    destination: new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }),
  });
  let postgresUp = true;
  const stats: QueueStats = { consumerId: 'c1', depth: 3, visible: 1, inFlight: 2, delayed: 0, deadLetters: 0, oldestEnqueuedAt: ENQUEUED_AT };
  const store = {
    queueStats: async () => {
      if (!postgresUp) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return [stats];
    },
  } as unknown as DeliveryStore;
  const registry = new Registry();
  registerQueueGauges({ store, workspacesOf: async (ids) => new Map(ids.map((id) => [id, 'w1'])), metrics: registry, logger });
  // What Prometheus reads: every gauge collected, as text.
  const scrape = async () => {
    const text = await registry.metrics();
    const values = (name: string) => [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'gm'))].map((m) => Number(m[1]));
    return { oldestAge: values('bus_queue_oldest_age_seconds'), depth: values('bus_queue_depth') };
  };

  expect(await scrape()).toEqual({ oldestAge: [600], depth: [3] });
  postgresUp = false;
  // Scraped every 2 s for 30 s of outage.
  const during: Array<{ oldestAge: number[]; depth: number[] }> = [];
  for (let i = 0; i < 15; i++) {
    jest.advanceTimersByTime(2_000);
    during.push(await scrape());
  }
  expect(during[0]).toEqual({ oldestAge: [602], depth: [3] });
  expect(during[14]).toEqual({ oldestAge: [630], depth: [3] });
  const warnings = lines.filter((l) => l.level === 'warn');
  expect(warnings.map((w) => w.msg)).toEqual(Array(3).fill('queue metrics could not be read; serving the last read'));
  expect((warnings[0]!.err as { code: string }).code).toBe('ECONNREFUSED');
  expect(warnings.map((w) => w.suppressed)).toEqual([0, expect.any(Number), expect.any(Number)]);
  expect((warnings[1]!.suppressed as number) + (warnings[2]!.suppressed as number)).toBeGreaterThan(0);
});
