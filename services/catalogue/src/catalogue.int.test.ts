/**
 * The catalogue routes on a real HTTP server and the real Redis, as a portal caller sees them: status,
 * headers and bodies, each response checked against schemas/openapi/catalogue.json. Each test gets a
 * server of its own whose Redis keys carry a prefix of its own, so the route limits (all callers
 * together) count that test's requests only.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { codeBody, createHttpApp, createRequestMetrics, serve, type RunningServer } from '@bus/http';
import { createRedis, type Redis } from '@bus/limits';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { openapi, skills } from '@bus/schemas';
import { loadSkillLibrary, MAX_BODY_BYTES, type SkillLibrary } from '@bus/skills';
import { createOpenApiChecker, fetchObserved, requireEnv, type ObservedResponse } from '@bus/testing';
import { createCatalogueService } from './service';

const api = createOpenApiChecker(openapi.catalogue);
const logLines: string[] = [];
const logger = createLogger({
  service: 'catalogue-test',
  level: 'trace',
  destination: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }),
});

interface Catalogue {
  url: string;
  redis: Redis;
  server: RunningServer;
}

async function startCatalogue(library?: SkillLibrary): Promise<Catalogue> {
  const redis = createRedis(requireEnv('REDIS_URL'), logger, { keyPrefix: `catalogue-test-${randomBytes(6).toString('hex')}` });
  // Until the client is connected the limits decide in process only; wait for Redis.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const service = createCatalogueService({ redis, readiness: [], ...(library ? { library } : {}) });
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const app = createHttpApp({
    name: 'portal',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: service.readiness,
    renderError: codeBody,
    routers: service.routers,
  });
  const server = await serve(app, { host: '127.0.0.1', port: 0, logger });
  return { url: server.url, redis, server };
}

let catalogue: Catalogue;
beforeEach(async () => {
  catalogue = await startCatalogue();
});
afterEach(async () => {
  await catalogue.server.close(1000);
  catalogue.redis.disconnect();
});

/** Fetches from the catalogue and checks the response against its OpenAPI document. */
async function call(method: string, path: string, init: RequestInit = {}): Promise<ObservedResponse & { headers: Headers }> {
  const response = await fetchObserved(`${catalogue.url}${path}`, { ...init, method });
  api.check(method, path, response);
  return response;
}

const validate = (body: string, contentType = 'application/json') => call('POST', '/api/skills/validate', { body, headers: { 'content-type': contentType } });
const json = (value: unknown) => JSON.stringify(value);
const PACING = { skill_id: 'telling/pacing', instance_label: 'speaker pacing', values: { max_segment_ms: { smart_speaker: 90000 } } };
const LOCALE_TYPO = { skill_id: 'telling/locale-match', instance_label: 'locale', values: { locale_path: 'story.langauge', match: 'language' } };
const LOCALE_PROBLEM = 'values.locale_path: "story.langauge" is not a path of SOM 1.0 story.context';

describe('GET /api/skills/library', () => {
  it('answers the library of docs/api.md#resources.9 for the current version, cacheable for five minutes', async () => {
    const res = await call('GET', '/api/skills/library');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const body = res.body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['library', 'versions', 'skills', 'topics', 'field_kinds']);
    expect(body.library).toMatchObject({ version: '0.2.2', status: 'current', suite: 'som-1.0-skills-0.2.2', som_version: '1.0.0' });
    expect(body.versions).toEqual([{ version: '0.2.2', status: 'current', suite: 'som-1.0-skills-0.2.2' }]);
    expect((body.skills as unknown[]).length).toBeGreaterThanOrEqual(8);
  });

  it('answers the same for ?version=0.2.2, with the same ETag', async () => {
    const plain = await call('GET', '/api/skills/library');
    const named = await call('GET', '/api/skills/library?version=0.2.2');
    expect(named.status).toBe(200);
    expect(named.body).toEqual(plain.body);
    expect(named.headers.get('etag')).toBe(plain.headers.get('etag'));
  });

  it.each(['9.9.9', '0.2', '', 'current'])('answers 404 skills.version_unknown for ?version=%s', async (version) => {
    const res = await call('GET', `/api/skills/library?version=${encodeURIComponent(version)}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: 'skills.version_unknown',
      message: `Library version ${JSON.stringify(version)} is not carried (carried: 0.2.2)`,
      request_id: res.headers.get('x-request-id'),
    });
  });

  it('answers 404 for a repeated version parameter rather than guessing', async () => {
    const res = await call('GET', '/api/skills/library?version=0.2.2&version=0.2.2');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'skills.version_unknown' });
  });

  it('answers 304 without a body to If-None-Match with the current ETag, and 200 to another', async () => {
    const first = await call('GET', '/api/skills/library');
    const etag = first.headers.get('etag') as string;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await call('GET', '/api/skills/library', { headers: { 'if-none-match': ifNoneMatch } });
      expect(again.status).toBe(304);
      expect(again.body).toBeUndefined();
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe('public, max-age=300');
    }
    const changed = await call('GET', '/api/skills/library', { headers: { 'if-none-match': '"an-older-answer"' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual(first.body);
  });

  it('answers 404 for an unknown version even with a matching If-None-Match', async () => {
    const etag = (await call('GET', '/api/skills/library')).headers.get('etag') as string;
    const res = await call('GET', '/api/skills/library?version=0.1.0', { headers: { 'if-none-match': etag } });
    expect(res.status).toBe(404);
  });
});

describe('several carried versions', () => {
  // 0.2.2 current and a 0.2.1 (supported) without telling/locale-match, as a later library would carry them.
  const current = skills.versions[0] as Record<string, unknown>;
  const older = {
    ...current,
    version: '0.2.1',
    status: 'supported',
    skills: (current.skills as Array<{ skill_id: string }>).filter((s) => s.skill_id !== 'telling/locale-match'),
  };

  beforeEach(async () => {
    await catalogue.server.close(1000);
    catalogue.redis.disconnect();
    catalogue = await startCatalogue(loadSkillLibrary({ versions: [older, current] }));
  });

  it('answers ?version=0.2.1 with that version, listing every version newest first', async () => {
    const res = await call('GET', '/api/skills/library?version=0.2.1');
    expect(res.status).toBe(200);
    const body = res.body as { library: { version: string }; versions: unknown[]; skills: Array<{ skill_id: string; skill_version: string }> };
    expect(body.library.version).toBe('0.2.1');
    expect(body.versions).toEqual([
      { version: '0.2.2', status: 'current', suite: 'som-1.0-skills-0.2.2' },
      { version: '0.2.1', status: 'supported', suite: 'som-1.0-skills-0.2.1' },
    ]);
    expect(body.skills.map((s) => s.skill_id)).not.toContain('telling/locale-match');
    expect(body.skills.every((s) => s.skill_version === '0.2.1')).toBe(true);
    const currentRes = await call('GET', '/api/skills/library');
    expect((currentRes.body as { library: { version: string } }).library.version).toBe('0.2.2');
    expect(currentRes.headers.get('etag')).not.toBe(res.headers.get('etag'));
  });

  it('checks an instance against the version it names, and answers the current library_version', async () => {
    const named = { skill_id: 'telling/locale-match', instance_label: 'locale', values: { locale_path: 'story.language', match: 'language' } };
    const res = await validate(json([named, { ...named, instance_label: 'old', skill_version: '0.2.1' }]));
    expect(res.body).toMatchObject({
      valid: false,
      library_version: '0.2.2',
      instances: [{ valid: true }, { valid: false, problems: ['skill_id "telling/locale-match" is not a skill of library 0.2.1'] }],
    });
  });
});

describe('POST /api/skills/validate: the input forms of docs/api.md#skill-catalogue', () => {
  it('checks JSON {instance}', async () => {
    const res = await validate(json({ instance: PACING }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      valid: true,
      library_version: '0.2.2',
      checked: 'instance',
      instances: [{ index: 0, instance_label: 'speaker pacing', skill_id: 'telling/pacing', valid: true, problems: [] }],
      problems: [],
    });
  });

  it('checks JSON {skills: [...]}', async () => {
    const res = await validate(json({ skills: [PACING, LOCALE_TYPO] }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: false,
      library_version: '0.2.2',
      checked: 'list',
      instances: [
        { index: 0, instance_label: 'speaker pacing', skill_id: 'telling/pacing', valid: true, problems: [] },
        { index: 1, instance_label: 'locale', skill_id: 'telling/locale-match', valid: false, problems: [LOCALE_PROBLEM] },
      ],
      problems: [],
    });
  });

  it('checks a bare JSON array', async () => {
    const res = await validate(json([LOCALE_TYPO]));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, checked: 'list', instances: [{ index: 0, problems: [LOCALE_PROBLEM] }] });
  });

  it('checks JSON {yaml: text}', async () => {
    const yaml = [
      'skills:',
      '  - skill_id: telling/locale-match',
      '    instance_label: locale',
      '    values: { locale_path: story.langauge, match: language }',
      '',
    ].join('\n');
    const res = await validate(json({ yaml }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, checked: 'file', instances: [{ skill_id: 'telling/locale-match', problems: [LOCALE_PROBLEM] }] });
  });

  it('checks an application/yaml body with a skills: section', async () => {
    const file = [
      '# Harbour Tales: skills of the bedtime line',
      'house: harbour-tales',
      'skills:',
      '  - skill_id: continuity/canon-guard',
      '    instance_label: canon',
      '    authority_scale: [author, editor]',
      '    values:',
      '      watch_paths: [characters.name, setting.locale]',
      '      min_authority: author',
      '  - skill_id: links/dead-end',
      '    skill_version: 0.2.2',
      '    instance_label: no dead ends',
      '    consumer: cq7deadend2ab',
      '    values: { min_open_links: 1 }',
      '',
    ].join('\n');
    const res = await validate(file, 'application/yaml');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      library_version: '0.2.2',
      checked: 'file',
      instances: [
        { index: 0, instance_label: 'canon', skill_id: 'continuity/canon-guard', valid: true, problems: [] },
        { index: 1, instance_label: 'no dead ends', skill_id: 'links/dead-end', valid: true, problems: [] },
      ],
      problems: [],
    });
  });

  it('checks an application/yaml body that is a bare list', async () => {
    const res = await validate(
      '- skill_id: telling/pacing\n  instance_label: p\n  values: { max_segment_ms: { web: 1 } }\n',
      'application/yaml; charset=utf-8',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, checked: 'file', instances: [{ skill_id: 'telling/pacing', valid: true }] });
  });
});

describe('POST /api/skills/validate: the checks of docs/api.md#skill-catalogue', () => {
  // One instance per kind of problem; the unit tests of @bus/skills go through every variant.
  it.each<[string, Record<string, unknown>, string[]]>([
    ['the skill', { ...PACING, skill_id: 'telling/pace' }, ['skill_id "telling/pace" is not a skill of library 0.2.2']],
    ['the version', { ...PACING, skill_version: '0.1.0' }, ['skill_version "0.1.0" is not a carried library version (carried: 0.2.2)']],
    ['the label', { ...PACING, instance_label: undefined }, ['instance_label is missing']],
    ['a required field', { ...PACING, values: {} }, ['values.max_segment_ms is missing (required)']],
    [
      'a field of another kind',
      { ...PACING, values: { max_segment_ms: { web: 1 }, max_telling_ms: 'long' } },
      ['values.max_telling_ms must be a whole number, 0 or more, got a string'],
    ],
    [
      'an enum option',
      { ...LOCALE_TYPO, values: { locale_path: 'story.language', match: 'exact' } },
      ['values.match: "exact" is not one of language, language_and_region'],
    ],
    [
      'a row key',
      { ...PACING, values: { max_segment_ms: { radio: 1 } } },
      ['values.max_segment_ms: "radio" is not a key of this row (keys: broadcast, live, mobile_app, smart_speaker, voice_assistant, web)'],
    ],
    ['a story path', LOCALE_TYPO, [LOCALE_PROBLEM]],
    [
      "an authority against the instance's scale",
      {
        skill_id: 'links/gate-authority',
        instance_label: 'gates',
        authority_scale: ['author', 'editor'],
        values: { allowed_changers: { author: true }, override_authority: 'producer' },
      },
      ['values.override_authority: "producer" is not on the instance\'s authority_scale (author, editor)'],
    ],
    [
      'a required authority_scale',
      { skill_id: 'links/gate-authority', instance_label: 'gates', values: { allowed_changers: { author: true }, override_authority: 'editor' } },
      [
        "authority_scale is missing; links/gate-authority compares authorities, so it needs the house's scale",
        'values.override_authority: "editor" cannot be checked: the instance has no valid authority_scale',
      ],
    ],
  ])('reports %s', async (_what, instance, problems) => {
    const res = await validate(json({ instance }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, checked: 'instance', instances: [{ index: 0, valid: false, problems }], problems: [] });
  });

  it('accepts consumer unchecked', async () => {
    const res = await validate(json({ instance: { ...PACING, consumer: { executor: 'anything', n: 1 } } }));
    expect(res.body).toMatchObject({ valid: true });
  });

  it('reports a label used twice in a list on both instances', async () => {
    const res = await validate(
      json([PACING, { ...LOCALE_TYPO, instance_label: 'speaker pacing', values: { locale_path: 'story.language', match: 'language' } }]),
    );
    const problem = 'instance_label "speaker pacing" is used by more than one instance (0, 1)';
    expect(res.body).toMatchObject({ valid: false, instances: [{ problems: [problem] }, { problems: [problem] }] });
  });

  it('checks 200 instances, and answers 201 with a top-level problem (still 200)', async () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ ...PACING, instance_label: `pacing ${i}` }));
    const atLimit = await validate(json({ skills: list(200) }));
    expect(atLimit.status).toBe(200);
    expect(atLimit.body).toMatchObject({ valid: true, problems: [] });
    expect((atLimit.body as { instances: unknown[] }).instances).toHaveLength(200);
    const over = await validate(json({ skills: list(201) }));
    expect(over.status).toBe(200);
    expect(over.body).toEqual({
      valid: false,
      library_version: '0.2.2',
      checked: 'list',
      instances: [],
      problems: ['the list has 201 instances, more than the 200 allowed; none was checked'],
    });
  });
});

describe("POST /api/skills/validate: the answer's size is bounded whatever the input (docs/skills.md#the-answers-size)", () => {
  /** The bound docs/skills.md states. */
  const ANSWER_BOUND = 691_000;
  const bytesOf = (body: unknown) => Buffer.byteLength(JSON.stringify(body));
  type Answer = { valid: boolean; instances: Array<{ instance_label: string; skill_id: string; problems: string[] }> };

  it('answers 200 instances of 180 unknown keys each with 10 problems an instance and a line counting the rest', async () => {
    const keys = Object.fromEntries(Array.from({ length: 180 }, (_, k) => [String.fromCharCode(97 + Math.floor(k / 26), 97 + (k % 26)), 1]));
    const body = json({ skills: Array.from({ length: 200 }, () => keys) });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const res = await validate(body);
    expect(res.status).toBe(200);
    const answer = res.body as Answer;
    expect(answer.valid).toBe(false);
    expect(answer.instances).toHaveLength(200);
    for (const instance of answer.instances) {
      expect(instance.problems).toHaveLength(11);
      expect(instance.problems[10]).toBe('and 172 more problems not listed');
    }
    expect(bytesOf(answer)).toBeLessThan(300_000);
  });

  it('answers the largest answer a 256 KB body can ask for within the bound: labels and skill ids of escaped control characters, unknown keys', async () => {
    // YAML's "\x01" is 4 bytes of the body and 6 of the answer (\u0001): the most an echoed character can grow.
    const control = (n: number) => '\\x01'.repeat(n);
    const keys = Array.from({ length: 10 }, (_, k) => `k${k}: 1`).join(', ');
    const lines = Array.from(
      { length: 200 },
      (_, i) => `- {skill_id: "${control(101)}", instance_label: "${control(196)}${String(i).padStart(4, '0')}", ${keys}}`,
    );
    const body = `skills:\n${lines.join('\n')}\n`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const res = await validate(body, 'application/yaml');
    expect(res.status).toBe(200);
    const answer = res.body as Answer;
    expect(answer.instances).toHaveLength(200);
    // A valid label of 200 characters comes back whole; an id this long is not a skill, and says so.
    expect(answer.instances[7]!.instance_label).toBe(`${'\u0001'.repeat(196)}0007`);
    expect(answer.instances[7]!.skill_id).toBe(`${'\u0001'.repeat(97)}...`);
    expect(answer.instances[7]!.problems.at(-1)).toBe('and 1 more problem not listed');
    expect(bytesOf(answer)).toBeGreaterThan(550_000);
    expect(bytesOf(answer)).toBeLessThanOrEqual(ANSWER_BOUND);
  });
});

describe('POST /api/skills/validate: unreadable bodies answer 400 skills.unreadable', () => {
  it.each<[string, string, string, string]>([
    ['an empty body', '', 'application/json', 'The body is empty'],
    ['a JSON type that is not JSON', '{"instance": ', 'application/json', 'The body is not JSON (Content-Type application/json)'],
    ['neither JSON nor YAML', '{"skills": [}', 'text/plain', 'The body is neither JSON nor YAML'],
    ['a YAML file without a skills: section', 'house: harbour-tales\n', 'application/yaml', 'The body has no skills: section and is not a list'],
    [
      'a yaml text without a skills: section',
      json({ yaml: 'house: harbour-tales' }),
      'application/json',
      'The yaml text has no skills: section and is not a list',
    ],
    ['JSON of no input form', json({ house: 'harbour-tales' }), 'application/json', 'The body has none of instance, skills or yaml, and is not a list'],
  ])('%s', async (_what, body, type, message) => {
    const res = await validate(body, type);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'skills.unreadable', message, request_id: res.headers.get('x-request-id') });
  });

  it('refuses broken YAML, saying where', async () => {
    const res = await validate('skills:\n  - skill_id: [telling/pacing\n', 'application/yaml');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'skills.unreadable', message: expect.stringMatching(/^The body is not YAML \([A-Z_]+ at line \d+, column \d+\)$/) });
  });

  it('reads a body of exactly 256 KB', async () => {
    const body = `[${' '.repeat(MAX_BODY_BYTES - 2)}]`;
    expect(Buffer.byteLength(body)).toBe(262_144);
    const res = await validate(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, checked: 'list', instances: [] });
  });

  it('refuses a body one byte over 256 KB', async () => {
    const res = await validate(`[${' '.repeat(MAX_BODY_BYTES - 1)}]`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'skills.unreadable', message: 'The body is over 262144 bytes (256 KB)' });
  });

  it('refuses a declared Content-Length over 256 KB before a byte of the body is sent', async () => {
    // The client declares 256 KB + 1 but sends nothing: an answer proves nothing was waited for.
    const answer = await new Promise<{ status: number; headers: Record<string, string | undefined>; body: string }>((resolve, reject) => {
      const req = request(
        `${catalogue.url}/api/skills/validate`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': String(MAX_BODY_BYTES + 1) } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string | undefined>, body }));
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    const observed = { status: answer.status, headers: answer.headers, body: JSON.parse(answer.body) as unknown };
    api.check('POST', '/api/skills/validate', observed);
    expect(observed.status).toBe(400);
    expect(answer.headers.connection).toBe('close');
    expect(observed.body).toMatchObject({ code: 'skills.unreadable', message: 'The body is over 262144 bytes (256 KB)' });
  });

  it('cuts a chunked body at the first byte over 256 KB', async () => {
    const answer = await new Promise<{ status: number; headers: Record<string, string | undefined>; body: string }>((resolve, reject) => {
      const req = request(
        `${catalogue.url}/api/skills/validate`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string | undefined>, body }));
        },
      );
      req.on('error', reject);
      req.write(`[${' '.repeat(MAX_BODY_BYTES)}`);
      // Never end the request: the server must answer without waiting for the rest.
    });
    const observed = { status: answer.status, headers: answer.headers, body: JSON.parse(answer.body) as unknown };
    api.check('POST', '/api/skills/validate', observed);
    expect(observed.body).toMatchObject({ code: 'skills.unreadable', message: 'The body is over 262144 bytes (256 KB)' });
  });
});

describe('route limits, all callers together (docs/api.md#limits)', () => {
  async function burst(path: string, n: number, init: RequestInit = {}) {
    const method = init.method ?? 'GET';
    const responses = await Promise.all(Array.from({ length: n }, () => call(method, path, init)));
    return { ok: responses.filter((r) => r.status !== 429), limited: responses.filter((r) => r.status === 429) };
  }

  it('serves the library 20 times at once (10 a second, bursts of 20), then answers 429 rate.limited with Retry-After', async () => {
    const { ok, limited } = await burst('/api/skills/library', 25);
    expect(ok.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(limited).toHaveLength(5);
    for (const res of limited) {
      expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(res.body).toEqual({
        code: 'rate.limited',
        message: expect.stringMatching(/^Too many library requests; retry after \d+ s$/),
        request_id: res.headers.get('x-request-id'),
      });
    }
  });

  it('limits validate to 10 at once (5 a second, bursts of 10), before reading the body', async () => {
    const { ok, limited } = await burst('/api/skills/validate', 15, {
      method: 'POST',
      body: json({ instance: PACING }),
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(limited).toHaveLength(5);
    expect(limited[0]?.body).toMatchObject({ code: 'rate.limited', message: expect.stringMatching(/^Too many validation requests/) });
    // A limited request is refused even when its body would be unreadable: the limit comes first.
    const unreadable = await validate('');
    expect(unreadable.status).toBe(429);
  });

  it('counts the two routes apart, and counts everyone together', async () => {
    await burst('/api/skills/validate', 12, { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } });
    expect((await call('GET', '/api/skills/library')).status).toBe(200);
    // A second server with the same Redis (another replica) shares the count.
    const replica = createCatalogueService({ redis: catalogue.redis, readiness: [] });
    const metrics = createMetricsRegistry({ defaultMetrics: false });
    const app = createHttpApp({
      name: 'replica',
      logger,
      metrics,
      requestMetrics: createRequestMetrics(metrics),
      readiness: [],
      renderError: codeBody,
      routers: replica.routers,
    });
    const server = await serve(app, { host: '127.0.0.1', port: 0, logger });
    try {
      const res = await fetchObserved(`${server.url}/api/skills/validate`, { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } });
      api.check('POST', '/api/skills/validate', res);
      expect(res.status).toBe(429);
    } finally {
      await server.close(1000);
    }
  });
});

describe('GET /api/skills/openapi.json', () => {
  it('serves the OpenAPI 3.1 document of the catalogue routes', async () => {
    const res = await call('GET', '/api/skills/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(openapi.catalogue);
    expect(openapi.catalogue.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(openapi.catalogue.paths).sort()).toEqual(['/api/skills/library', '/api/skills/openapi.json', '/api/skills/validate']);
  });

  it('tags it for revalidation: 304 to If-None-Match with its ETag', async () => {
    const etag = (await call('GET', '/api/skills/openapi.json')).headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const again = await call('GET', '/api/skills/openapi.json', { headers: { 'if-none-match': etag } });
    expect([again.status, again.body, again.headers.get('etag'), again.headers.get('cache-control')]).toEqual([304, undefined, etag, 'public, max-age=300']);
  });
});

describe('the body is never stored or logged', () => {
  it('leaves no trace of a marker sent through every form, valid or not, in any log line', async () => {
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    const before = logLines.length;
    const bodies: Array<[string, string]> = [
      [json({ instance: { ...PACING, instance_label: marker } }), 'application/json'],
      [json({ skills: [{ ...LOCALE_TYPO, values: { locale_path: marker, match: marker } }] }), 'application/json'],
      [json([{ skill_id: marker }]), 'application/json'],
      [json({ yaml: `skills:\n  - skill_id: ${marker}\n` }), 'application/json'],
      [`skills:\n  - instance_label: ${marker}\n`, 'application/yaml'],
      [`${marker}: [unclosed\n`, 'application/yaml'],
      [`{"${marker}": `, 'application/json'],
      [json({ [marker]: 1 }), 'application/json'],
    ];
    for (const [body, type] of bodies) {
      const res = await validate(body, type);
      expect([200, 400]).toContain(res.status);
    }
    const lines = logLines.slice(before);
    // The request lines are there, so the log was captured; none of them carries the marker.
    expect(lines.filter((l) => l.includes('"route":"/api/skills/validate"'))).toHaveLength(bodies.length);
    expect(lines.filter((l) => l.includes(marker))).toEqual([]);
  });
});
