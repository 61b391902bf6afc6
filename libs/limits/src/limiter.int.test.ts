import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { requireEnv } from '@bus/testing';
import { consumeInOrder, createConnectionQuotas, createLimiter, createRedis, enforce, RateLimitedError, type Redis } from './index';

let redis: Redis;
beforeAll(async () => {
  redis = createRedis(requireEnv('REDIS_URL'), pino({ level: 'silent' }));
  // Until the client is connected every limiter decides in process (insurance); wait for Redis.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(() => redis.disconnect());

const unique = (name: string) => `${name}-${randomBytes(4).toString('hex')}`;

async function consumeN(limiter: ReturnType<typeof createLimiter>, key: string, n: number) {
  const decisions = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.consume(key));
  return decisions;
}

describe('limits on the real Redis', () => {
  it('allows the rate, then refuses with a Retry-After within the window', async () => {
    const limiter = createLimiter(redis, { label: 'test', name: unique('rate'), rate: { points: 5, durationSeconds: 60 } });
    const decisions = await consumeN(limiter, 'client-a', 6);
    // Each allowed answer says what it left of the window, from the count it made.
    expect(decisions.slice(0, 5).map((d) => d.allowed && d.remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const d of decisions.slice(0, 5)) expect(d.allowed && d.resetSeconds).toBeGreaterThanOrEqual(59);
    expect(decisions[5]).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    const refused = decisions[5] as { retryAfterSeconds: number };
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    // Another key has its own allowance.
    expect(await limiter.consume('client-b')).toEqual({ allowed: true, remaining: 4, resetSeconds: 60 });
  });

  it('adds the burst allowance once the rate is spent, and no more, counting down what is left of it', async () => {
    const limiter = createLimiter(redis, {
      label: 'test',
      name: unique('bursty'),
      rate: { points: 3, durationSeconds: 60 },
      burst: { points: 2, durationSeconds: 120 },
    });
    const decisions = await consumeN(limiter, 'k', 6);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    // The rate's 3, then the burst's 2: left until the rate's window ends (60 s, not the burst's 120).
    expect(decisions.slice(0, 5).map((d) => d.allowed && d.remaining)).toEqual([2, 1, 0, 1, 0]);
    for (const d of decisions.slice(0, 5)) expect(d.allowed && d.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('shares the count between limiters of the same name, as replicas do', async () => {
    const name = unique('shared');
    const replicaA = createLimiter(redis, { label: 'test', name, rate: { points: 2, durationSeconds: 60 } });
    const replicaB = createLimiter(redis, { label: 'test', name, rate: { points: 2, durationSeconds: 60 } });
    expect(await replicaA.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
    expect(await replicaB.consume('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await replicaA.consume('k')).allowed).toBe(false);
    expect(await redis.get(`limit:${name}:k`)).toBe('3');
  });

  it('sends the counts of requests that arrive while one is in flight together, each answered as if alone, in arrival order', async () => {
    const limiter = createLimiter(redis, { label: 'test', name: unique('together'), rate: { points: 5, durationSeconds: 60 } });
    const pipelines = jest.spyOn(redis, 'pipeline');
    try {
      const decisions = await Promise.all(Array.from({ length: 12 }, () => limiter.consume('k')));
      expect(decisions.map((d) => (d.allowed ? d.remaining : 'refused'))).toEqual([4, 3, 2, 1, 0, ...Array<string>(7).fill('refused')]);
      // The first goes at once, alone; the eleven that arrived meanwhile go in one pipeline (one write).
      expect(pipelines).toHaveBeenCalledTimes(1);
      expect(await redis.get(`limit:${limiter.name}:k`)).toBe('12');
    } finally {
      pipelines.mockRestore();
    }
  });

  it('keeps limiting in process when Redis is unreachable', async () => {
    const dead = createRedis('redis://127.0.0.1:1', pino({ level: 'silent' }));
    try {
      const limiter = createLimiter(dead, { label: 'test', name: unique('insured'), rate: { points: 2, durationSeconds: 60 } });
      expect((await consumeN(limiter, 'k', 3)).map((d) => d.allowed)).toEqual([true, true, false]);
    } finally {
      dead.disconnect();
    }
  });

  it('counts several limits in one Redis command as consuming them one after the other would, none after a refusal', async () => {
    const wide = createLimiter(redis, { label: 'test', name: unique('wide'), rate: { points: 2, durationSeconds: 60 } });
    const narrow = createLimiter(redis, {
      label: 'test',
      name: unique('narrow'),
      rate: { points: 1, durationSeconds: 60 },
      burst: { points: 1, durationSeconds: 120 },
    });
    const both = [
      [wide, 'k'],
      [narrow, 'k'],
    ] as const;
    const sent = jest.spyOn(redis, 'sendCommand');
    const answers = [];
    let commands: number;
    try {
      for (let i = 0; i < 4; i++) answers.push(await consumeInOrder(both));
      commands = sent.mock.calls.length;
    } finally {
      sent.mockRestore();
    }
    expect(commands).toBe(4);
    expect(answers.map((a) => a.map((d) => (d.allowed ? d.remaining : 'refused')))).toEqual([
      [1, 0], // the narrow rate's one
      [0, 0], // the narrow burst's one
      ['refused'], // wide spent: narrow is not counted
      ['refused'],
    ]);
    expect(await redis.get(`limit:${wide.name}:k`)).toBe('4');
    expect(await redis.get(`limit:${narrow.name}:k`)).toBe('2');
    expect(await redis.get(`limit:${narrow.name}:burst:k`)).toBe('1');
    // The one-limit path counts the same keys: the narrow rate and burst are spent.
    expect(await narrow.consume('k')).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
  });

  it('reads a burst of 0 points as no burst: refused once the rate is spent, with a Retry-After', async () => {
    const limiter = createLimiter(redis, {
      label: 'test',
      name: unique('no-burst'),
      rate: { points: 1, durationSeconds: 60 },
      burst: { points: 0, durationSeconds: 60 },
    });
    expect((await consumeN(limiter, 'k', 3)).map((d) => (d.allowed ? d.remaining : d.retryAfterSeconds > 0))).toEqual([0, true, true]);
  });

  it('falls back to each limiter’s insurance, in order, when Redis is unreachable', async () => {
    const dead = createRedis('redis://127.0.0.1:1', pino({ level: 'silent' }));
    try {
      const first = createLimiter(dead, { label: 'test', name: unique('insured-a'), rate: { points: 1, durationSeconds: 60 } });
      const second = createLimiter(dead, { label: 'test', name: unique('insured-b'), rate: { points: 5, durationSeconds: 60 } });
      const checks = [
        [first, 'k'],
        [second, 'k'],
      ] as const;
      expect((await consumeInOrder(checks)).map((d) => d.allowed)).toEqual([true, true]);
      expect((await consumeInOrder(checks)).map((d) => d.allowed)).toEqual([false]);
      // The second was counted once only: four more fit its five.
      expect((await consumeN(second, 'k', 5)).map((d) => d.allowed)).toEqual([true, true, true, true, false]);
    } finally {
      dead.disconnect();
    }
  });

  it('enforce throws 429 rate.limited with Retry-After at the first refusing limiter', async () => {
    const open = createLimiter(redis, { label: 'test', name: unique('open'), rate: { points: 100, durationSeconds: 60 } });
    const tight = createLimiter(redis, { label: 'test', name: unique('tight'), rate: { points: 1, durationSeconds: 60 } });
    await enforce([
      [open, 'ip'],
      [tight, 'client'],
    ]);
    const error = await enforce([
      [open, 'ip'],
      [tight, 'client'],
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ status: 429, rule: 'rate.limited', headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
  });
});

describe('connection quotas on the real Redis', () => {
  const tiny = { perSecond: 2, burst: 3, perDay: 5 };

  it('multiplies the per-second rate and burst by BUS_LIMIT_CONNECTION_FACTOR, not the day', async () => {
    const quotas = createConnectionQuotas(redis, undefined, { factor: 3 });
    const connection = unique('c');
    const at = new Date('2026-11-22T12:00:00.000Z');
    const decisions = [];
    // 2 × 3 per second plus 1 × 3 of burst: the tenth within the second is refused, as rate.limited.
    for (let i = 0; i < 10; i++) decisions.push(await quotas.consume(connection, { ...tiny, perDay: 1_000 }, at));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, true, true, true, false]);
    expect(decisions[9]).toMatchObject({ rule: 'rate.limited' });
    // The day stays the quota's own: 5 a day is used up by the sixth request, whatever the factor.
    const daily = [];
    const other = unique('c');
    for (let i = 0; i < 6; i++) daily.push(await quotas.consume(other, { perSecond: 100, burst: 100, perDay: 5 }, at));
    expect(daily.map((d) => (d.allowed ? 'ok' : d.rule))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'quota.exceeded']);
  });

  it('refuses past the rate with burst as rate.limited, and past the day as quota.exceeded until midnight UTC', async () => {
    const quotas = createConnectionQuotas(redis);
    const connection = unique('c');
    const at = (iso: string) => new Date(iso);
    const day1 = '2026-11-22T23:59:00.000Z';
    // 2 per second plus 1 of burst: the fourth within the second is refused.
    const first = [];
    for (let i = 0; i < 4; i++) first.push(await quotas.consume(connection, tiny, at(day1)));
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(first[3]).toMatchObject({ rule: 'rate.limited' });
    // What each left: of the second (the rate's 2, then the burst's 1), and of the day until midnight UTC.
    expect(first.map((d) => d.second.remaining)).toEqual([1, 0, 0, 0]);
    expect(first.map((d) => d.day)).toEqual([
      { remaining: 4, resetSeconds: 60 },
      { remaining: 3, resetSeconds: 60 },
      { remaining: 2, resetSeconds: 60 },
      undefined,
    ]);
    expect(first[3]!.second.resetSeconds).toBe((first[3] as { retryAfterSeconds: number }).retryAfterSeconds);

    // A larger per-second quota (a tier change) applies at once; the day's count (3) carries on.
    const wider = { ...tiny, perSecond: 50, burst: 50 };
    expect((await quotas.consume(connection, wider, at(day1))).allowed).toBe(true);
    expect((await quotas.consume(connection, wider, at(day1))).allowed).toBe(true);
    expect(await quotas.consume(connection, wider, at(day1))).toEqual({
      allowed: false,
      rule: 'quota.exceeded',
      retryAfterSeconds: 60,
      second: { remaining: expect.any(Number), resetSeconds: expect.any(Number) },
      day: { remaining: 0, resetSeconds: 60 },
    });

    // Lowering the daily quota keeps the day's count: it is now over at once.
    expect(await quotas.consume(connection, { ...wider, perDay: 4 }, at(day1))).toMatchObject({ allowed: false, rule: 'quota.exceeded' });

    // The next UTC day starts from zero.
    expect((await quotas.consume(connection, wider, at('2026-11-23T00:00:01.000Z'))).allowed).toBe(true);
  });

  it('counts limits given first (the host limits) before the connection in the same call: refused there, it throws and counts no window of the connection', async () => {
    const quotas = createConnectionQuotas(redis);
    const connection = unique('c');
    const address = createLimiter(redis, { label: 'address', name: unique('address'), rate: { points: 2, durationSeconds: 60 } });
    const host = [[address, '127.0.0.1']] as const;
    const at = new Date('2026-11-22T12:00:00.000Z');
    const wide = { perSecond: 100, burst: 100, perDay: 1_000 };
    expect(await quotas.consume(connection, wide, at, host)).toMatchObject({ allowed: true, second: { remaining: 99 }, day: { remaining: 999 } });
    expect(await quotas.consume(connection, wide, at, host)).toMatchObject({ allowed: true, second: { remaining: 98 }, day: { remaining: 998 } });
    const refused = await quotas.consume(connection, wide, at, host).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ status: 429, rule: 'rate.limited', headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    // The refused request left the connection's windows as they were.
    expect(await quotas.consume(connection, wide, at)).toMatchObject({ allowed: true, second: { remaining: 97 }, day: { remaining: 997 } });
  });
});
