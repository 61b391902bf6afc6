import { AdminRequestInvalidError } from './errors';
import { overlapSeconds, parseJsonObject, permissions, quotaSetting, replaySince } from './admin-requests';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AdminRequestInvalidError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('quota settings', () => {
  it('takes the named tiers alone and custom limits within the ceiling', () => {
    expect(quotaSetting({ tier: 'minimal' })).toEqual({ tier: 'minimal' });
    expect(quotaSetting({ tier: 'custom', per_second: 200, burst: 400, per_day: 10_000_000 })).toEqual({ tier: 'custom', perSecond: 200, burst: 400, perDay: 10_000_000 });
    expect(quotaSetting({ tier: 'custom', per_second: 1, burst: 1, per_day: 1 })).toEqual({ tier: 'custom', perSecond: 1, burst: 1, perDay: 1 });
  });

  it.each([
    [{ tier: 'platinum' }, 'tier must be one of minimal, standard, high, custom'],
    [{ tier: 'high', per_second: 5 }, 'Unknown field "per_second"'],
    [{ tier: 'custom', per_second: 201, burst: 400, per_day: 1 }, 'per_second must be a whole number from 1 to 200'],
    [{ tier: 'custom', per_second: 0, burst: 400, per_day: 1 }, 'per_second must be a whole number from 1 to 200'],
    [{ tier: 'custom', per_second: 10, burst: 401, per_day: 1 }, 'burst must be a whole number from 10 to 400'],
    [{ tier: 'custom', per_second: 10, burst: 9, per_day: 1 }, 'burst must be a whole number from 10 to 400'],
    [{ tier: 'custom', per_second: 10, burst: 10, per_day: 10_000_001 }, 'per_day must be a whole number from 1 to 10000000'],
    [{ tier: 'custom', per_second: 1.5, burst: 10, per_day: 1 }, 'per_second must be a whole number'],
    [{ tier: 'custom', per_second: 10, burst: 10 }, 'per_day must be a whole number'],
    ['standard', 'quota must be an object with a tier'],
  ])('refuses %j', (value, message) => {
    expect(refusal(() => quotaSetting(value))).toContain(message);
  });
});

describe('permissions', () => {
  it('takes both lists, drops repeats, and reads a missing list as empty', () => {
    expect(permissions({ system_ids: ['a.b', 'a.b'], message_types: ['telling.started'] })).toEqual({ systemIds: ['a.b'], messageTypes: ['telling.started'] });
    expect(permissions({})).toEqual({ systemIds: [], messageTypes: [] });
  });

  it('refuses values that are not identifiers, and unknown fields', () => {
    expect(refusal(() => permissions({ system_ids: ['has space'] }))).toContain('system_ids must be a list');
    expect(refusal(() => permissions({ system_ids: 'a.b' }))).toContain('system_ids must be a list');
    expect(refusal(() => permissions({ message_types: [1] }))).toContain('message_types must be a list');
    expect(refusal(() => permissions({ systems: [] }))).toContain('Unknown field "systems"');
  });
});

describe('overlap and replay times', () => {
  it('bounds the overlap to 0..7 days in whole seconds', () => {
    expect(overlapSeconds({ overlap_seconds: 0 })).toBe(0);
    expect(overlapSeconds({ overlap_seconds: 604_800 })).toBe(604_800);
    expect(refusal(() => overlapSeconds({ overlap_seconds: 604_801 }))).toContain('overlap_seconds');
    expect(refusal(() => overlapSeconds({ overlap_seconds: '1h' }))).toContain('overlap_seconds');
  });

  const now = new Date('2026-11-22T12:00:00Z');
  const week = 7 * 86_400_000;
  it('takes an RFC 3339 time within the archive', () => {
    expect(replaySince({ since: '2026-11-22T10:00:00Z' }, now, week)).toEqual(new Date('2026-11-22T10:00:00Z'));
    expect(replaySince({ since: '2026-11-15T12:00:00.000Z' }, now, week)).toEqual(new Date('2026-11-15T12:00:00Z'));
    expect(replaySince({ since: '2026-11-22T13:00:00+02:00' }, now, week)).toEqual(new Date('2026-11-22T11:00:00Z'));
  });

  it.each([
    ['2026-11-15T11:59:59Z', 'keeps 7 days'],
    ['2026-11-22T12:00:01Z', 'in the future'],
    ['2h', 'RFC 3339'],
    ['2026-11-22', 'RFC 3339'],
    ['2026-13-40T10:00:00Z', 'RFC 3339'],
  ])('refuses %s', (since, message) => {
    expect(refusal(() => replaySince({ since }, now, week))).toContain(message);
  });
});

describe('bodies', () => {
  it('reads a JSON object, an empty body as {}, and refuses anything else', () => {
    expect(parseJsonObject(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(parseJsonObject(Buffer.alloc(0))).toEqual({});
    for (const raw of ['[1]', 'null', '"x"', '{', 'nope']) expect(refusal(() => parseJsonObject(Buffer.from(raw)))).toBe('The body must be a JSON object');
  });
});
