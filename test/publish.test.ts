import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { rateLimitLeft } from './support/rate-limit';
import { stepsOf } from './support/server-timing';
import { TenantFixture, type Tenant } from './support/tenants';

const busApi = createOpenApiChecker(openapi.bus);
const SYSTEM_ID = 'storyteller.web';
const ALL_TYPES = Object.keys(som.examples);

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
let token: string;

beforeAll(async () => {
  bus = await startBus();
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES.filter((t) => t !== 'system.audit') });
  other = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
  token = await tenants.token(house.producer);
}, 90_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
});

type Example = Record<string, unknown> & { message_id: string; correlation_id: string; payload: Record<string, unknown> };
function message(type: string, correlationId = `c-${randomUUID()}`, extra: Record<string, unknown> = {}): Example {
  return { ...(som.examples[type] as Example), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString(), ...extra };
}

/** POSTs to the bus and checks the answer against the OpenAPI document. */
async function post(path: string, body: string | Buffer, bearer: string | null = token, headers: Record<string, string> = {}) {
  const response = await fetchObserved(`${bus.busUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}), ...headers },
    body,
  });
  busApi.check('POST', path, response);
  return response;
}
const publish = (m: unknown, bearer?: string | null) => post(`/v1/tenants/${house.workspaceId}/messages`, JSON.stringify(m), bearer);
const rulesOf = (body: unknown) => (body as { violations: Array<{ rule: string }> }).violations.map((v) => v.rule);

describe('POST /v1/tenants/{t}/messages', () => {
  it('accepts a valid message with 202 and answers its resend 200 duplicate', async () => {
    const started = message('telling.started');
    const first = await publish(started);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: true, message_id: started.message_id, message_type: 'telling.started', family: 'telling' });
    const again = await publish(started);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: true, duplicate: true, message_id: started.message_id });
    const accepted = await tenants.db('accepted_messages').where({ workspace_id: house.workspaceId, message_id: started.message_id });
    expect(accepted).toHaveLength(1);
  });

  it('reports tolerated violations on a 202', async () => {
    const skewed = message('story.context', undefined, { occurred_at: new Date(Date.now() + 60 * 60_000).toISOString() });
    const res = await publish(skewed);
    expect(res.status).toBe(202);
    expect(rulesOf({ violations: (res.body as { tolerated: unknown[] }).tolerated })).toEqual(['conformance.occurred_at_future']);
  });

  it('refuses with the status and rule of docs/api.md#errors', async () => {
    const started = message('telling.started');
    await publish(started);
    const cases: Array<[string, unknown, number, string[]]> = [
      ['invalid SOM', { ...message('telling.started'), som_version: 1 }, 400, ['schema.type']],
      ['a reused message_id', { ...started, system_id: SYSTEM_ID, payload: { ...started.payload, channel: 'web' } }, 409, ['idempotency.message_id_reused']],
      ['a sequence violation', message('telling.exposed'), 409, ['sequence.telling.not_started']],
      ['a system_id not allowed', message('story.context', undefined, { system_id: 'other.system' }), 403, ['policy.system_id_not_allowed']],
      ['a message_type not allowed', message('system.audit', undefined, { system_id: SYSTEM_ID }), 403, ['policy.message_type_not_allowed']],
    ];
    for (const [what, body, status, rules] of cases) {
      const res = await publish(body);
      expect({ what, status: res.status, rules: rulesOf(res.body) }).toEqual({ what, status, rules });
    }
  });

  it('answers 401 producer.unauthenticated without or with a bad token, with WWW-Authenticate, and no ETag nor quota fields', async () => {
    for (const bearer of [null, 'not-a-jwt', `${token.slice(0, -4)}AAAA`]) {
      const res = await publish(message('story.context'), bearer);
      expect(res.status).toBe(401);
      expect(rulesOf(res.body)).toEqual(['producer.unauthenticated']);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      // Refused before the connection is known: nothing to cache, no quota to tell.
      expect([res.headers.get('etag'), res.headers.get('ratelimit'), res.headers.get('ratelimit-policy')]).toEqual([null, null, null]);
    }
  });

  it('answers 403 tenant.mismatch for another workspace and producer.not_registered for a consumer token', async () => {
    const mismatch = await post(`/v1/tenants/${other.workspaceId}/messages`, JSON.stringify(message('story.context')));
    expect([mismatch.status, rulesOf(mismatch.body)]).toEqual([403, ['tenant.mismatch']]);
    const consumerToken = await tenants.token(house.consumer);
    const wrongKind = await publish(message('story.context'), consumerToken);
    expect([wrongKind.status, rulesOf(wrongKind.body)]).toEqual([403, ['producer.not_registered']]);
  });

  it('accepts 240,000 bytes and refuses 240,001 with 413 message.too_large', async () => {
    const padded = (size: number) => {
      const json = JSON.stringify(message('story.context'));
      return Buffer.from(json + ' '.repeat(size - Buffer.byteLength(json)), 'utf8');
    };
    const path = `/v1/tenants/${house.workspaceId}/messages`;
    expect((await post(path, padded(240_000))).status).toBe(202);
    const over = await post(path, padded(240_001));
    expect([over.status, rulesOf(over.body)]).toEqual([413, ['message.too_large']]);
  });

  it('tells the producer its tier and what is left (RateLimit-Policy, RateLimit), counting down, with no ETag', async () => {
    const tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
    const bearer = await tenants.token(tenant.producer);
    const path = `/v1/tenants/${tenant.workspaceId}/messages`;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post(path, JSON.stringify(message('story.context')), bearer));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const untilMidnight = (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000;
    for (const answer of answers) {
      // A house workspace is on the standard tier: 20 a second, bursts of 40, 100,000 a day (docs/api.md#limits).
      expect(answer.headers.get('ratelimit-policy')).toBe('"burst";q=20;w=1;bus-burst=40, "daily";q=100000;w=86400');
      expect(answer.headers.get('etag')).toBeNull();
    }
    const left = answers.map((a) => rateLimitLeft(a.headers));
    // The day counts every request of the connection: one fewer left after each.
    expect(left.map((l) => l.daily?.r)).toEqual([99_999, 99_998, 99_997]);
    for (const [i, l] of left.entries()) {
      expect(Math.abs(l.daily!.t - untilMidnight)).toBeLessThan(60);
      expect(l.burst!.t).toBeLessThanOrEqual(1);
      // Within one second the second's count goes down too; a new second starts again at 19.
      expect(l.burst!.r).toBe(i > 0 && l.burst!.r !== 19 ? left[i - 1]!.burst!.r - 1 : 19);
    }
  });

  it('applies a tier change to the same token within 2 s: 429 rate.limited, then quota.exceeded, with Retry-After', async () => {
    const tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
    const bearer = await tenants.token(tenant.producer);
    const path = `/v1/tenants/${tenant.workspaceId}/messages`;
    const send = () => post(path, JSON.stringify(message('story.context')), bearer);
    expect((await send()).status).toBe(202);

    // Through the admin API's store, which announces the change on the control topic: the gateway's
    // cached allowance is dropped at once, and the next publishes count against the new tier.
    await tenants.admin.setQuota('workspace', tenant.workspaceId, { tier: 'custom', perSecond: 1, burst: 1, perDay: 1000 });
    // The first publish let in under the new tier opens a fresh one-second window, and the next one
    // within it is over the rate. Both answers must be the new tier's: a pair whose first publish the
    // old tier still let in (the change landing between the two) is sent again.
    const newPolicy = '"burst";q=1;w=1;bus-burst=1, "daily";q=1000;w=86400';
    const burst = await eventually(
      async () => [await send(), await send()],
      (pair) => pair[0]?.status === 202 && pair[1]?.status === 429 && pair.every((answer) => answer.headers.get('ratelimit-policy') === newPolicy),
      { intervalMs: 100, timeoutMs: 2_000, retryReadErrors: false, what: 'the new tier of 1/s applied' },
    );
    expect(rulesOf(burst[1]?.body)).toEqual(['rate.limited']);
    expect(Number(burst[1]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The new tier is what the fields say, and the refusal says the second has nothing left until
    // Retry-After (the day was not counted, so it is left out).
    for (const answer of burst) expect(answer.headers.get('ratelimit-policy')).toBe(newPolicy);
    expect(rateLimitLeft(burst[1]!.headers)).toEqual({ burst: { r: 0, t: Number(burst[1]?.headers.get('retry-after')) } });

    await tenants.admin.setQuota('workspace', tenant.workspaceId, { tier: 'custom', perSecond: 200, burst: 400, perDay: 1 });
    const exceeded = await eventually(send, (res) => res.status === 429 && rulesOf(res.body).includes('quota.exceeded'), {
      intervalMs: 100,
      timeoutMs: 2_000,
      retryReadErrors: false,
      what: 'the new daily allowance of 1 applied',
    });
    expect([exceeded.status, exceeded.body]).toEqual([429, expect.objectContaining({ violations: [expect.objectContaining({ rule: 'quota.exceeded' })] })]);
    expect(Number(exceeded.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(rateLimitLeft(exceeded.headers).daily).toEqual({ r: 0, t: Number(exceeded.headers.get('retry-after')) });
  });
});

describe('when the registry cannot be read', () => {
  it('answers 503 registry.unavailable with Retry-After, accepts nothing, and accepts the same message_id once it can', async () => {
    const started = message('telling.started');
    // A tenant this bus has not cached yet: its connection is read (its own table stays readable),
    // its app's permissions are not.
    const fresh = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
    const bearer = await tenants.token(fresh.producer);
    const publishFresh = (m: unknown) => post(`/v1/tenants/${fresh.workspaceId}/messages`, JSON.stringify(m), bearer);
    await tenants.db.raw('ALTER TABLE permissions RENAME TO permissions_unreadable');
    let refused;
    try {
      refused = await publishFresh(started);
    } finally {
      await tenants.db.raw('ALTER TABLE permissions_unreadable RENAME TO permissions');
    }
    expect([refused.status, rulesOf(refused.body)]).toEqual([503, ['registry.unavailable']]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await tenants.db('accepted_messages').where({ message_id: started.message_id })).toEqual([]);

    // A failed read is not cached: the retry reads the permissions again.
    expect((await publishFresh(started)).status).toBe(202);
    expect((await publishFresh(started)).status).toBe(200);
    expect(await tenants.db('accepted_messages').where({ message_id: started.message_id })).toHaveLength(1);
  });
});

describe('the bus firewall', () => {
  /** A raw request target, as a scanner sends it (fetch would normalise it first). */
  function raw(method: string, target: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(bus.busUrl);
      const req = request({ hostname, port, path: target, method, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('answers 403 request.blocked to attack patterns before authenticating or reading anything', async () => {
    for (const [method, target] of [
      ['POST', `/v1/tenants/${house.workspaceId}/../../etc/passwd`],
      ['POST', `/v1/tenants/${house.workspaceId}/messages?x=%3Cscript%3Ealert(1)%3C/script%3E`],
    ] as const) {
      const res = await raw(method, target);
      expect({ target, status: res.status, rules: rulesOf(res.body) }).toEqual({ target, status: 403, rules: ['request.blocked'] });
    }
  });
});

describe('POST /v1/tenants/{t}/validate', () => {
  it('runs the same checks, answers dry_run, and records nothing', async () => {
    const started = message('telling.started');
    const res = await post(`/v1/tenants/${house.workspaceId}/validate`, JSON.stringify(started));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: true, message_id: started.message_id, message_type: 'telling.started', family: 'telling', dry_run: true });
    expect(await tenants.db('accepted_messages').where({ message_id: started.message_id })).toEqual([]);
    const refused = await post(`/v1/tenants/${house.workspaceId}/validate`, JSON.stringify(message('telling.ended')));
    expect([refused.status, rulesOf(refused.body)]).toEqual([409, ['sequence.telling.not_started']]);
  });
});

describe('metrics', () => {
  it('count publishes by mode, outcome and rule, and 429s by rule and limit (docs/observability.md)', async () => {
    const text = await (await fetch(`${bus.busUrl}/metrics`)).text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"[\]().]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    expect(value('bus_publish_total{mode="publish",outcome="accepted",rule="none"}')).toBeGreaterThan(0);
    expect(value('bus_publish_total{mode="publish",outcome="duplicate",rule="none"}')).toBeGreaterThan(0);
    expect(value('bus_publish_total{mode="publish",outcome="refused",rule="sequence.telling.not_started"}')).toBeGreaterThan(0);
    expect(value('bus_publish_total{mode="publish",outcome="refused",rule="producer.unauthenticated"}')).toBe(3);
    expect(value('bus_publish_total{mode="publish",outcome="error",rule="registry.unavailable"}')).toBe(1);
    expect(value('bus_publish_total{mode="validate",outcome="accepted",rule="none"}')).toBeGreaterThan(0);
    expect(value('bus_rate_limited_total{app="all-in-one",rule="rate.limited",limit="connection_second"}')).toBeGreaterThan(0);
    expect(value('bus_rate_limited_total{app="all-in-one",rule="quota.exceeded",limit="connection_day"}')).toBe(1);
  });
});

describe('Server-Timing', () => {
  it('times every step of a publish (limits, auth, quota, body, validate, policy, commit) and its total', async () => {
    const res = await publish(message('telling.started'));
    expect(res.status).toBe(202);
    const steps = stepsOf(res.headers.get('server-timing'));
    expect(Object.keys(steps)).toEqual(['limits', 'auth', 'quota', 'body', 'validate', 'policy', 'commit', 'total']);
    for (const ms of Object.values(steps)) expect(ms).toBeGreaterThanOrEqual(0);
    const sum = Object.entries(steps)
      .filter(([name]) => name !== 'total')
      .reduce((total, [, ms]) => total + ms, 0);
    expect(sum).toBeLessThanOrEqual(steps.total! + 0.05);
  });

  it("times a validate's reads of Postgres as dry_run where a publish has its commit", async () => {
    const res = await post(`/v1/tenants/${house.workspaceId}/validate`, JSON.stringify(message('telling.started')));
    expect(res.status).toBe(202);
    expect(Object.keys(stepsOf(res.headers.get('server-timing')))).toEqual(['limits', 'auth', 'quota', 'body', 'validate', 'policy', 'dry_run', 'total']);
  });

  it('times the steps a refused publish got through, and gives every other answer its total', async () => {
    const refused = await publish(message('telling.exposed'));
    expect(refused.status).toBe(409);
    expect(Object.keys(stepsOf(refused.headers.get('server-timing')))).toEqual(['limits', 'auth', 'quota', 'body', 'validate', 'policy', 'commit', 'total']);
    const unauthenticated = await publish(message('telling.started'), null);
    expect(Object.keys(stepsOf(unauthenticated.headers.get('server-timing')))).toEqual(['limits', 'total']);
    const ready = await fetch(`${bus.busUrl}/readyz`);
    expect(Object.keys(stepsOf(ready.headers.get('server-timing')))).toEqual(['total']);
  });

  it('counts each step in bus_request_step_seconds', async () => {
    const text = await (await fetch(`${bus.busUrl}/metrics`)).text();
    for (const step of ['limits', 'auth', 'quota', 'body', 'validate', 'policy', 'commit']) {
      expect(text).toMatch(new RegExp(`^bus_request_step_seconds_count\\{app="gateway",route="/v1/tenants/:t/messages",step="${step}"\\} [1-9]`, 'm'));
    }
  });
});

describe('GET /v1/rules', () => {
  it('serves the rule catalogue, every rule with source, status and description', async () => {
    const res = await fetchObserved(`${bus.busUrl}/v1/rules`);
    busApi.check('GET', '/v1/rules', res);
    const rules = (res.body as { rules: Array<{ rule: string; status: number }> }).rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rule: 'message.too_large', status: 413 }),
        expect.objectContaining({ rule: 'idempotency.message_id_reused', status: 409 }),
        expect.objectContaining({ rule: 'publish.unavailable', status: 503 }),
      ]),
    );
  });
});
