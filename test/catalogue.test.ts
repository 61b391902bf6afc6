import { randomBytes } from 'node:crypto';
import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, freePort, requireEnv, startNodeProcess, waitForAllChecksOk, type ServiceProcess } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';

const catalogueApi = createOpenApiChecker(openapi.catalogue);

/** Fetches from a portal host and checks the response against the catalogue's OpenAPI document. */
async function portalFetch(baseUrl: string, path: string, init: RequestInit = {}) {
  const response = await fetchObserved(`${baseUrl}${path}`, init);
  catalogueApi.check(init.method ?? 'GET', path, response);
  return response;
}

/**
 * Sends `marker` to POST /api/skills/validate in every input form and through every refusal, valid
 * or not, so the process has had every chance to log it.
 */
async function sendMarkerEverywhere(baseUrl: string, marker: string): Promise<number[]> {
  const bodies: Array<[string, string]> = [
    [JSON.stringify({ instance: { skill_id: 'telling/pacing', instance_label: marker, values: { max_segment_ms: { web: 1 } } } }), 'application/json'],
    [
      JSON.stringify({ skills: [{ skill_id: 'telling/locale-match', instance_label: 'l', values: { locale_path: marker, match: marker } }] }),
      'application/json',
    ],
    [JSON.stringify([{ skill_id: marker, consumer: marker }]), 'application/json'],
    [JSON.stringify({ yaml: `skills:\n  - skill_id: ${marker}\n` }), 'application/json'],
    [`skills:\n  - instance_label: ${marker}\n`, 'application/yaml'],
    [`- skill_id: ${marker}\n`, 'application/yaml'],
    [`${marker}: [unclosed\n`, 'application/yaml'],
    [`{"instance": "${marker}`, 'application/json'],
    [JSON.stringify({ [marker]: 1 }), 'text/plain'],
  ];
  const statuses: number[] = [];
  for (const [body, type] of bodies) {
    const res = await portalFetch(baseUrl, '/api/skills/validate', { method: 'POST', body, headers: { 'content-type': type } });
    statuses.push(res.status);
  }
  return statuses;
}

describe('the catalogue process alone', () => {
  let proc: ServiceProcess;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    proc = startNodeProcess('services/catalogue/dist/main.js', {
      HOST: '127.0.0.1',
      PORT: String(port),
      REDIS_URL: requireEnv('REDIS_URL'),
      REDIS_KEY_PREFIX: `catalogue-e2e-${randomBytes(6).toString('hex')}`,
      // The most talkative level: whatever any code logs, at any level, is in the output.
      LOG_LEVEL: 'trace',
    });
    await waitForAllChecksOk(url, { process: proc });
  }, 30_000);
  afterAll(async () => {
    await proc?.stop();
  });

  it('is ready once Redis answers, and serves the library', async () => {
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ ready: true, checks: { redis: 'ok' } });
    const res = await portalFetch(url, '/api/skills/library');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ library: { version: '0.2.2', status: 'current' } });
  });

  it('never writes a validation body to its log, whatever the form or the answer', async () => {
    const marker = `body-marker-${randomBytes(8).toString('hex')}`;
    const statuses = await sendMarkerEverywhere(url, marker);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 400, 400, 400]);
    // Stop the process so every line it wrote is in, then read its whole output.
    expect(await proc.stop('SIGTERM')).toBe(0);
    const output = proc.output();
    expect(output.match(/"route":"\/api\/skills\/validate"/g)).toHaveLength(statuses.length);
    expect(output).not.toContain(marker);
  }, 30_000);
});

describe('the catalogue in the all-in-one process (npm run up)', () => {
  let bus: RunningBus;
  beforeAll(async () => {
    bus = await startBus({ LOG_LEVEL: 'trace' });
  }, 60_000);
  afterAll(async () => {
    await bus?.stop();
  });

  it('serves the catalogue routes and the OpenAPI document on the portal port, not the bus port', async () => {
    expect((await portalFetch(bus.portalUrl, '/api/skills/library')).status).toBe(200);
    const openapiRes = await portalFetch(bus.portalUrl, '/api/skills/openapi.json');
    expect(openapiRes.body).toEqual(openapi.catalogue);
    const res = await portalFetch(bus.portalUrl, '/api/skills/validate', { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } });
    expect(res.body).toEqual({ valid: true, library_version: '0.2.2', checked: 'list', instances: [], problems: [] });
    expect((await fetch(`${bus.busUrl}/api/skills/library`)).status).toBe(404);
  });

  it('limits the library route across all callers with a 429 in the portal shape', async () => {
    const responses = await Promise.all(Array.from({ length: 25 }, () => portalFetch(bus.portalUrl, '/api/skills/library')));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited[0]?.body).toEqual({ code: 'rate.limited', message: expect.any(String), request_id: expect.any(String) });
  });

  it('never writes a validation body to its log', async () => {
    const marker = `body-marker-${randomBytes(8).toString('hex')}`;
    // The validate limit is 5 a second, bursts of 10: the nine requests fit in a fresh bus.
    expect(await sendMarkerEverywhere(bus.portalUrl, marker)).not.toContain(429);
    await bus.process.stop('SIGTERM');
    expect(bus.process.output()).toContain('"route":"/api/skills/validate"');
    expect(bus.process.output()).not.toContain(marker);
  }, 30_000);
});
