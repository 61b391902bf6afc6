import { retryAfterSeconds } from './wait';

describe('retryAfterSeconds', () => {
  const now = new Date('2026-11-22T06:00:00Z');
  it.each([
    [{ 'Retry-After': '7' }, 7],
    [{ 'Retry-After': 'Sun, 22 Nov 2026 06:00:30 GMT' }, 30],
    [{ 'Retry-After': '3', RateLimit: '"burst";r=0;t=9' }, 3],
    [{ RateLimit: '"burst";r=0;t=1, "daily";r=0;t=4000' }, 4000],
    [{ RateLimit: '"burst";r=5;t=1' }, undefined],
    [{ 'Retry-After': 'soon' }, undefined],
    [{}, undefined],
  ])('reads %j as %s', (headers, seconds) => {
    expect(retryAfterSeconds(new Headers(headers as Record<string, string>), now)).toBe(seconds);
  });
});
