import { compileOpenApiRequests } from '@bus/http';
import { MAX_OVERLAP_SECONDS } from '@bus/identity';
import { CUSTOM_QUOTA_CEILING } from '@bus/limits';
import { openapi } from '@bus/schemas';
import { AdminRequestInvalidError } from './errors';
import { permissions, quotaSetting, replaySince } from './admin-requests';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(AdminRequestInvalidError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

/** The admin document as the portal validates requests with it (service.ts). */
const requests = compileOpenApiRequests(openapi.admin);
function check(method: string, path: string, body?: unknown): string | 'ok' {
  const found = requests.operation(method, path.split('?')[0] as string);
  if (!found) throw new Error(`${method} ${path}: no operation`);
  const parameters = found.operation.checkParameters(found.pathParams, new URLSearchParams(path.split('?')[1] ?? ''));
  if (!parameters.ok) return parameters.problem;
  if (body === undefined) return 'ok';
  const checked = found.operation.checkJsonBody(body);
  return checked.ok ? 'ok' : checked.problem;
}

describe('admin requests checked against schemas/openapi/admin.json (no drift)', () => {
  it('refuses a date-time that is no calendar date instead of rolling it over (2026-02-30 is not 2 March)', () => {
    expect(check('POST', '/api/admin/connections/cabcdefghijk2/replays', { since: '2026-02-30T08:00:00Z' })).toMatch(
      /^body "since" must match format "date-time"/,
    );
    expect(check('POST', '/api/admin/connections/cabcdefghijk2/replays', { since: '2026-02-28T08:00:00Z' })).toBe('ok');
    expect(check('POST', '/api/admin/connections/cabcdefghijk2/replays', { since: '2028-02-29T08:00:00.5+01:00' })).toBe('ok');
  });

  it.each(['2h', '2026-11-22', '2026-13-40T10:00:00Z', '2026-11-22 08:00:00Z', '2026-11-22T08:00:00', '2026-11-22T23:59:60Z', '2026-11-22t08:00:00z'])(
    'refuses the replay time %j',
    (since) => {
      expect(check('POST', '/api/admin/connections/cabcdefghijk2/replays', { since })).toMatch(/^body "since" must match/);
    },
  );

  it('refuses names with control characters (a tab too), line separators or bidirectional controls, or only spaces or invisible characters, in the schema', () => {
    for (const name of [
      'Tab\there',
      'Line\nbreak',
      'Nul\u0000',
      'Del\u007f',
      'C1\u0085',
      ' ',
      '',
      'Line\u2028separator',
      'Right-to-left \u202eoverride',
      'Isolate\u2066',
      '\u200b',
      ' \ufeff\u00ad ',
    ]) {
      expect({ name, problem: check('POST', '/api/admin/organisations', { name, kind: 'house' }) }).toEqual({
        name,
        problem: expect.stringMatching(/^body "name" must/),
      });
    }
    for (const name of ['Storyteller Studio', 'Ünïcødé ✓ 名前', ' padded ', 'שלום עולם', 'zero\u200bwidth inside'])
      expect(check('POST', '/api/admin/organisations', { name, kind: 'house' })).toBe('ok');
  });

  it('refuses query parameters an operation does not take, and repeated ones', () => {
    expect(check('GET', '/api/admin/workspaces?organisation_id=oabcdefghijk2')).toBe('ok');
    expect(check('GET', '/api/admin/workspaces?organisation=oabcdefghijk2')).toBe('unknown query parameter "organisation"');
    expect(check('GET', '/api/admin/organisations?page=2')).toBe('unknown query parameter "page"');
    expect(check('GET', '/api/admin/workspaces?organisation_id=oabcdefghijk2&organisation_id=oabcdefghijk3')).toBe(
      'query parameter "organisation_id" is given more than once',
    );
    expect(check('GET', '/api/admin/connections?workspace_id=nope')).toMatch(/^query parameter "workspace_id" must match pattern/);
  });

  it('refuses path parameters that are not ids of their form, naming them', () => {
    expect(check('GET', '/api/admin/connections/not-an-id')).toMatch(/^path parameter "c" must match pattern/);
    expect(check('GET', '/api/admin/connections/cabcdefghijk2')).toBe('ok');
  });

  it('names unknown and missing body fields, and wrong types', () => {
    expect(check('POST', '/api/admin/organisations', { name: 'x', kind: 'house', tier: 'high' })).toBe('body has an unknown field "tier"');
    expect(check('POST', '/api/admin/organisations', { name: 'x' })).toBe('body "kind" is required');
    expect(check('POST', '/api/admin/connections/cabcdefghijk2/rotate', { overlap_seconds: '1h' })).toBe('body "overlap_seconds" must be integer');
    expect(check('POST', '/api/admin/connections/cabcdefghijk2/rotate', { overlap_seconds: MAX_OVERLAP_SECONDS + 1 })).toBe(
      `body "overlap_seconds" must be <= ${MAX_OVERLAP_SECONDS}`,
    );
    expect(check('PUT', '/api/admin/apps/aabcdefghijk2/permissions', { system_ids: ['has space'] })).toMatch(/^body "system_ids.0" must match pattern/);
    expect(check('PUT', '/api/admin/organisations/oabcdefghijk2/quota', { tier: 'custom', per_second: 201, burst: 400, per_day: 1 })).toContain(
      'body "per_second" must be <= 200',
    );
  });

  it('states the same ceilings as the code that enforces them', () => {
    const schemas = (openapi.admin as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas;
    const custom = (schemas.QuotaSetting as { oneOf: Array<{ properties: Record<string, { maximum?: number }> }> }).oneOf[1]!.properties;
    expect([custom.per_second?.maximum, custom.burst?.maximum, custom.per_day?.maximum]).toEqual([
      CUSTOM_QUOTA_CEILING.perSecond,
      CUSTOM_QUOTA_CEILING.burst,
      CUSTOM_QUOTA_CEILING.perDay,
    ]);
    expect((schemas.Rotation as { properties: { overlap_seconds: { maximum: number } } }).properties.overlap_seconds.maximum).toBe(MAX_OVERLAP_SECONDS);
  });

  it('documents the 400 the validation answers on every operation it checks', () => {
    const paths = openapi.admin.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    const without = Object.entries(paths)
      .filter(([path]) => path !== '/api/admin/openapi.json')
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => !('400' in op.responses))
          .map(([method]) => `${method} ${path}`),
      );
    expect(without).toEqual([]);
  });
});

describe('what the schema cannot say, checked in code', () => {
  it('takes the named tiers alone and custom limits with the burst at least the rate', () => {
    expect(quotaSetting({ tier: 'minimal' })).toEqual({ tier: 'minimal' });
    expect(quotaSetting({ tier: 'custom', per_second: 200, burst: 400, per_day: 10_000_000 })).toEqual({
      tier: 'custom',
      perSecond: 200,
      burst: 400,
      perDay: 10_000_000,
    });
    expect(quotaSetting({ tier: 'custom', per_second: 1, burst: 1, per_day: 1 })).toEqual({ tier: 'custom', perSecond: 1, burst: 1, perDay: 1 });
    expect(refusal(() => quotaSetting({ tier: 'custom', per_second: 10, burst: 9, per_day: 1 }))).toContain(
      'quota.burst must be at least quota.per_second (10)',
    );
  });

  it('drops repeated permissions and reads a missing list as empty', () => {
    expect(permissions({ system_ids: ['a.b', 'a.b'], message_types: ['telling.started'] })).toEqual({ systemIds: ['a.b'], messageTypes: ['telling.started'] });
    expect(permissions({})).toEqual({ systemIds: [], messageTypes: [] });
  });

  const now = new Date('2026-11-22T12:00:00Z');
  const week = 7 * 86_400_000;
  it('takes a replay time within the archive', () => {
    expect(replaySince({ since: '2026-11-22T10:00:00Z' }, now, week)).toEqual(new Date('2026-11-22T10:00:00Z'));
    expect(replaySince({ since: '2026-11-15T12:00:00.000Z' }, now, week)).toEqual(new Date('2026-11-15T12:00:00Z'));
    expect(replaySince({ since: '2026-11-22T13:00:00+02:00' }, now, week)).toEqual(new Date('2026-11-22T11:00:00Z'));
  });

  it.each([
    ['2026-11-15T11:59:59Z', 'keeps 7 days'],
    ['2026-11-22T12:00:01Z', 'in the future'],
  ])('refuses %s', (since, message) => {
    expect(refusal(() => replaySince({ since }, now, week))).toContain(message);
  });
});
