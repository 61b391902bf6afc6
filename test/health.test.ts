import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';

const busApi = createOpenApiChecker(openapi.bus);

/** Fetches from the bus host and checks the response against its OpenAPI document. */
async function busFetch(path: string, init?: RequestInit) {
  const response = await fetchObserved(`${bus.busUrl}${path}`, init);
  busApi.check(init?.method ?? 'GET', path, response);
  return response;
}

// docs/api.md#health, in the order the spec lists them.
const MESSAGE_TYPES = [
  'delivery.media_available',
  'link.committed',
  'link.gate_changed',
  'link.withdrawn',
  'skill.warning.raised',
  'story.context',
  'system.audit',
  'telling.ended',
  'telling.exposed',
  'telling.started',
];

let bus: RunningBus;
beforeAll(async () => {
  bus = await startBus();
}, 60_000);
afterAll(async () => {
  await bus?.stop();
}, 30_000);

describe('the all-in-one bus', () => {
  it('answers GET /v1/health with exactly the fields of docs/api.md#health', async () => {
    const res = await busFetch('/v1/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ ok: true, som_version: '1.0.0', message_types: MESSAGE_TYPES });
  });

  it('is ready when Postgres, Redis and Kafka are reachable', async () => {
    const res = await busFetch('/readyz');
    expect(res.body).toEqual({ ready: true, checks: { postgres: 'ok', redis: 'ok', kafka: 'ok', 'control-topic': 'ok' } });
    expect(res.status).toBe(200);
    const portal = await fetch(`${bus.portalUrl}/readyz`);
    expect(await portal.json()).toEqual({ ready: true, checks: { redis: 'ok', postgres: 'ok', kafka: 'ok' } });
  });

  it('serves its OpenAPI document, which lists every route the bus host answers', async () => {
    const res = await busFetch('/v1/openapi.json');
    expect(res.body).toEqual(openapi.bus);
    expect((await busFetch('/healthz')).status).toBe(200);
    expect((await busFetch('/metrics')).status).toBe(200);
  });

  it('keeps bus and portal routes on their own ports', async () => {
    expect((await fetch(`${bus.portalUrl}/v1/health`)).status).toBe(404);
    expect((await fetch(`${bus.busUrl}/api/skills/library`)).status).toBe(404);
  });
});
