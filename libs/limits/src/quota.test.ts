import { CUSTOM_QUOTA_CEILING, QUOTA_TIERS, rateLimitFields, secondsUntilUtcMidnight } from './quota';

describe('quota tiers', () => {
  it('carry docs/api.md#limits figures', () => {
    expect(QUOTA_TIERS).toEqual({
      minimal: { perSecond: 10, burst: 20, perDay: 25_000 },
      standard: { perSecond: 20, burst: 40, perDay: 100_000 },
      high: { perSecond: 100, burst: 200, perDay: 1_000_000 },
    });
    expect(CUSTOM_QUOTA_CEILING).toEqual({ perSecond: 200, burst: 400, perDay: 10_000_000 });
  });
});

describe('secondsUntilUtcMidnight', () => {
  it.each([
    ['2026-11-22T00:00:00.000Z', 86_400],
    ['2026-11-22T23:59:59.000Z', 1],
    ['2026-11-22T23:59:59.900Z', 1],
    ['2026-12-31T12:00:00.000Z', 43_200],
  ])('at %s is %d', (at, seconds) => {
    expect(secondsUntilUtcMidnight(new Date(at))).toBe(seconds);
  });
});

describe('rateLimitFields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  const standard = QUOTA_TIERS.standard;

  it("names the tier's per-second rate with its burst and its day, and what an allowed request left of both", () => {
    expect(rateLimitFields(standard, { allowed: true, second: { remaining: 19, resetSeconds: 1 }, day: { remaining: 99_999, resetSeconds: 3600 } })).toEqual({
      'RateLimit-Policy': '"burst";q=20;w=1;bus-burst=40, "daily";q=100000;w=86400',
      RateLimit: '"burst";r=19;t=1, "daily";r=99999;t=3600',
    });
  });

  it('says r=0 for the window that refused; the day is left out when the second refused before it was counted', () => {
    const perSecond = rateLimitFields(standard, { allowed: false, rule: 'rate.limited', retryAfterSeconds: 1, second: { remaining: 0, resetSeconds: 1 } });
    expect(perSecond.RateLimit).toBe('"burst";r=0;t=1');
    const daily = rateLimitFields(standard, {
      allowed: false,
      rule: 'quota.exceeded',
      retryAfterSeconds: 60,
      second: { remaining: 12, resetSeconds: 1 },
      day: { remaining: 0, resetSeconds: 60 },
    });
    expect(daily.RateLimit).toBe('"burst";r=12;t=1, "daily";r=0;t=60');
  });
});
