import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createLogger } from '@bus/observability';
import type { DeliveryStore } from '@bus/queue';
import { createQuarantineRecheck } from './quarantine-recheck';

afterEach(() => jest.useRealTimers());

it('warns once per 10 s, with the count of failures not logged, while the re-check fails every second', async () => {
  jest.useFakeTimers();
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: 'delivery',
    level: 'info',
    destination: new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }),
  });
  const store = {
    quarantinedAged: async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    },
  } as unknown as DeliveryStore;
  const recheck = createQuarantineRecheck({ store, metrics: new Registry(), logger, quarantineRecheckMs: 30_000 });
  recheck.start();
  // 25 s of a Postgres outage: 25 failed re-checks.
  await jest.advanceTimersByTimeAsync(25_000);
  await recheck.stop();
  expect(lines.map(({ level, msg, suppressed }) => ({ level, msg, suppressed }))).toEqual([
    { level: 'warn', msg: 'quarantine re-check failed; retried every second', suppressed: 0 },
    { level: 'warn', msg: 'quarantine re-check failed; retried every second', suppressed: 9 },
    { level: 'warn', msg: 'quarantine re-check failed; retried every second', suppressed: 9 },
  ]);
  expect((lines[0]!.err as { code: string }).code).toBe('ECONNREFUSED');
});
