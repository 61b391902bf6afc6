import { CUSTOM_QUOTA_CEILING, QUOTA_TIERS, secondsUntilUtcMidnight } from './quota';

describe('quota tiers', () => {
  it('carry spec §8 figures', () => {
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
