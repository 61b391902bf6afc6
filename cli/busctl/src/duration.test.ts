import { durationSeconds, formatSeconds, resolveSince } from './duration';

describe('durationSeconds', () => {
  it.each([
    ['90s', 90],
    ['15m', 900],
    ['1h', 3600],
    ['2d', 172_800],
    ['0s', 0],
    ['007m', 420],
    ['30d', 2_592_000],
  ])('reads %s as %i seconds', (text, seconds) => {
    expect(durationSeconds(text)).toBe(seconds);
  });

  it.each(['', '1', 'h', '1H', '1.5h', '-1h', '+1h', ' 1h', '1h ', '1 h', '1h30m', '1w', '1ms', 'PT1H', '99999999999999999d'])('refuses %p', (text) => {
    expect(durationSeconds(text)).toBeUndefined();
  });
});

describe('formatSeconds', () => {
  it.each([
    [0, '0s'],
    [0.9, '0s'],
    [-5, '0s'],
    [45, '45s'],
    [60, '1m'],
    [903, '15m 3s'],
    [3600, '1h'],
    [3661, '1h 1m'],
    [7_500, '2h 5m'],
    [86_401, '1d'],
    [273_600, '3d 4h'],
  ])('shows %p seconds as %s', (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});

describe('resolveSince', () => {
  const now = new Date('2026-11-22T06:00:00.000Z');

  it('takes a duration as that long before now', () => {
    expect(resolveSince('2h', now)).toBe('2026-11-22T04:00:00.000Z');
    expect(resolveSince('90s', now)).toBe('2026-11-22T05:58:30.000Z');
    expect(resolveSince('2d', now)).toBe('2026-11-20T06:00:00.000Z');
  });

  it.each([
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21t10:00:00z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21 10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00.250Z', '2026-11-21T10:00:00.250Z'],
    ['2026-11-21T12:00:00+02:00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T05:30:00-04:30', '2026-11-21T10:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('takes the RFC 3339 time %s as %s (UTC)', (text, iso) => {
    expect(resolveSince(text, now)).toBe(iso);
  });

  it.each([
    '2026-11-21',
    '2026-11-21T10:00:00',
    '2026-11-21T10:00Z',
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-00-01T00:00:00Z',
    '2026-11-00T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:60Z',
    '2026-11-21T10:00:00+0200',
    'yesterday',
    '1h ago',
    '',
  ])('refuses %p', (text) => {
    expect(resolveSince(text, now)).toBeUndefined();
  });
});
