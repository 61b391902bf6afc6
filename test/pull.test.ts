import { randomUUID } from 'node:crypto';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { stepsOf } from './support/server-timing';
import { rateLimitLeft } from './support/rate-limit';
import { TenantFixture, type Tenant } from './support/tenants';

const busApi = createOpenApiChecker(openapi.bus);
const SYSTEM_ID = 'storyteller.web';
const ALL_TYPES = Object.keys(som.examples);

interface Received {
  receipt_handle: string;
  message_id: string;
  message_type: string;
  correlation_id: string;
  published_at: string;
  receive_count: number;
  envelope: Record<string, unknown>;
}

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
let second: { clientId: string; clientSecret: string };
const tokens: Record<string, string> = {};

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
  other = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
  second = await tenants.admin.createConnection({ appId: house.appId, kind: 'consumer' });
  tokens.producer = await tenants.token(house.producer);
  tokens.consumer = await tenants.token(house.consumer);
  tokens.second = await tenants.token(second);
  tokens.other = await tenants.token(other.consumer);
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

const call = (method: 'GET' | 'POST', path: string, bearer: string, body?: unknown) => bearerCall(bus, method, path, bearer, body);

const consumerPath = (c: string, route: string, t = house.workspaceId) => `/v1/tenants/${t}/consumers/${c}/${route}`;
async function receiveAs(c: string, bearer: string, query = 'wait_seconds=10'): Promise<Received[]> {
  const res = await call('GET', `${consumerPath(c, 'messages')}?${query}`, bearer);
  expect(res.status).toBe(200);
  return (res.body as { messages: Received[] }).messages;
}
const settle = (c: string, bearer: string, route: 'ack' | 'nack', body: unknown) => call('POST', consumerPath(c, route), bearer, body);

function message(type = 'telling.started', correlationId = `c-${randomUUID()}`) {
  return { ...(som.examples[type] as Record<string, unknown>), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString() };
}
const publishAs = (route: 'messages' | 'validate', body: unknown) => call('POST', `/v1/tenants/${house.workspaceId}/${route}`, tokens.producer!, body);
async function publishRaw(raw: string) {
  expect((await publishAs('messages', raw)).status).toBe(202);
}

/** Receives for `c` until `count` messages arrived (each receive long-polls). */
async function receiveAll(c: string, bearer: string, count: number): Promise<Received[]> {
  const got: Received[] = [];
  const received = async () => {
    got.push(...(await receiveAs(c, bearer, 'wait_seconds=5&max_messages=10')));
    return got.length;
  };
  await eventually(received, (n) => n >= count, { timeoutMs: 30_000, retryReadErrors: false, what: `${count} messages for ${c}` });
  return got;
}

describe('the pull API of the all-in-one bus', () => {
  it('delivers a published message end to end: receive → ack, with the exact envelope, then nothing is left', async () => {
    const m = message();
    await publishRaw(JSON.stringify(m, null, 3));
    const [got, ...rest] = await receiveAs(house.consumer.clientId, tokens.consumer!, 'wait_seconds=20');
    expect(rest).toEqual([]);
    expect(got).toMatchObject({ message_id: m.message_id, message_type: 'telling.started', correlation_id: m.correlation_id, receive_count: 1 });
    expect(got!.envelope).toEqual(m);
    const ack = await settle(house.consumer.clientId, tokens.consumer!, 'ack', { receipt_handles: [got!.receipt_handle] });
    expect(ack.status).toBe(200);
    expect(ack.body).toEqual({ results: [{ receipt_handle: got!.receipt_handle, status: 'done' }] });
    // Also drain the second consumer's copy of it.
    const copy = await receiveAll(second.clientId, tokens.second!, 1);
    expect(copy.map((r) => r.message_id)).toEqual([m.message_id]);
    await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: copy.map((r) => r.receipt_handle) });
    expect(await receiveAs(house.consumer.clientId, tokens.consumer!, 'wait_seconds=0')).toEqual([]);
  }, 60_000);

  it('never hands a consumer a message the gateway refused, nor a dry run', async () => {
    const correlationId = `c-${randomUUID()}`;
    const refused = [
      message('telling.exposed', correlationId), // 409: no telling started for this correlation id
      { ...message('telling.started'), system_id: 'not.permitted' }, // 403: not the app's system_id
      { ...message('telling.started'), payload: {} }, // 400: the payload schema
    ];
    const statuses = [];
    for (const m of refused) statuses.push((await publishAs('messages', m)).status);
    expect(statuses).toEqual([409, 403, 400]);
    const dryRun = message('telling.started');
    expect((await publishAs('validate', dryRun)).status).toBe(202);
    const accepted = message('telling.started', correlationId);
    await publishRaw(JSON.stringify(accepted));
    // Delivery has handled (enqueued or quarantined) every record the topic holds: the accepted one and
    // anything produced before its 202. Whatever else it had enqueued is receivable now.
    await deliveryCaughtUp(bus);

    for (const [c, bearer] of [
      [house.consumer.clientId, tokens.consumer!],
      [second.clientId, tokens.second!],
    ] as const) {
      const got = await receiveAll(c, bearer, 1);
      got.push(...(await receiveAs(c, bearer, 'wait_seconds=0')));
      expect(got.map((r) => r.message_id)).toEqual([accepted.message_id]);
      await settle(c, bearer, 'ack', { receipt_handles: got.map((r) => r.receipt_handle) });
    }
  }, 60_000);

  it('answers a waiting long poll promptly after a publish, well before wait_seconds', async () => {
    // Opened before the publish: whether the poll has already found the queue empty and parked when
    // delivery enqueues is not observable from outside the process, and either way it must answer
    // promptly. The parked poll's wake-up is proven in services/pull-api pull.int.test.ts, which waits
    // until the poll has found its queue empty before it enqueues.
    const waiting = receiveAs(house.consumer.clientId, tokens.consumer!, 'wait_seconds=20');
    const m = message();
    const publishedAt = Date.now();
    await publishRaw(JSON.stringify(m));
    const got = await waiting;
    const latency = Date.now() - publishedAt;
    expect(got.map((r) => r.message_id)).toEqual([m.message_id]);
    expect(latency).toBeLessThan(2_000);
    await settle(house.consumer.clientId, tokens.consumer!, 'ack', { receipt_handles: got.map((r) => r.receipt_handle) });
    const copy = await receiveAll(second.clientId, tokens.second!, 1);
    await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: copy.map((r) => r.receipt_handle) });
  }, 60_000);

  it('gives each of two consumers of one workspace every message, in order per correlation id', async () => {
    const correlation = `c-${randomUUID()}`;
    const ms = [message('telling.started', correlation), message('telling.exposed', correlation), message('telling.ended', correlation)];
    for (const m of ms) await publishRaw(JSON.stringify(m));
    for (const [c, bearer] of [
      [house.consumer.clientId, tokens.consumer!],
      [second.clientId, tokens.second!],
    ] as const) {
      const got: Received[] = [];
      while (got.length < ms.length) {
        const batch = await receiveAs(c, bearer, 'wait_seconds=10&max_messages=1');
        expect(batch.length).toBeGreaterThan(0);
        got.push(...batch);
        // FIFO per correlation id: ack before the next one can come.
        const ack = await settle(c, bearer, 'ack', { receipt_handles: batch.map((r) => r.receipt_handle) });
        expect((ack.body as { results: Array<{ status: string }> }).results.every((r) => r.status === 'done')).toBe(true);
      }
      expect(got.map((r) => r.message_id)).toEqual(ms.map((m) => m.message_id));
    }
  }, 60_000);

  it('fails the handle of an old lease after a nack and a new receive; nack answers per handle', async () => {
    const m = message();
    await publishRaw(JSON.stringify(m));
    const [first] = await receiveAll(house.consumer.clientId, tokens.consumer!, 1);
    const nack = await settle(house.consumer.clientId, tokens.consumer!, 'nack', { receipt_handles: [first!.receipt_handle, 'not-a-handle'] });
    expect(nack.body).toEqual({
      results: [
        { receipt_handle: first!.receipt_handle, status: 'done' },
        { receipt_handle: 'not-a-handle', status: 'failed', code: 'receipt_handle.invalid' },
      ],
    });
    const [again] = await receiveAs(house.consumer.clientId, tokens.consumer!, 'wait_seconds=5');
    expect([again?.message_id, again?.receive_count]).toEqual([m.message_id, 2]);
    const old = await settle(house.consumer.clientId, tokens.consumer!, 'ack', { receipt_handles: [first!.receipt_handle] });
    expect(old.body).toEqual({ results: [{ receipt_handle: first!.receipt_handle, status: 'failed', code: 'receipt_handle.stale' }] });
    // Another consumer cannot touch it with the handle, even on its own path.
    const foreign = await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: [again!.receipt_handle] });
    expect(foreign.body).toEqual({ results: [{ receipt_handle: again!.receipt_handle, status: 'failed', code: 'receipt_handle.invalid' }] });
    const current = await settle(house.consumer.clientId, tokens.consumer!, 'ack', { receipt_handles: [again!.receipt_handle] });
    expect(current.body).toEqual({ results: [{ receipt_handle: again!.receipt_handle, status: 'done' }] });
    const copy = await receiveAll(second.clientId, tokens.second!, 1);
    await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: copy.map((r) => r.receipt_handle) });
  }, 60_000);

  it('refuses a producer token, another consumer, another tenant, and bad parameters', async () => {
    const path = `${consumerPath(house.consumer.clientId, 'messages')}?wait_seconds=0`;
    const rule = (body: unknown) => (body as { violations: Array<{ rule: string }> }).violations[0]?.rule;
    const asProducer = await call('GET', path, tokens.producer!);
    expect([asProducer.status, rule(asProducer.body)]).toEqual([403, 'producer.not_registered']);
    const asSecond = await call('GET', path, tokens.second!);
    expect([asSecond.status, rule(asSecond.body)]).toEqual([403, 'consumer.mismatch']);
    const otherTenantPath = `${consumerPath(other.consumer.clientId, 'messages', house.workspaceId)}?wait_seconds=0`;
    const asOther = await call('GET', otherTenantPath, tokens.other!);
    expect([asOther.status, rule(asOther.body)]).toEqual([403, 'tenant.mismatch']);
    const unauthenticated = await fetchObserved(`${bus.busUrl}${path}`);
    busApi.check('GET', path, unauthenticated);
    expect(unauthenticated.status).toBe(401);
    // Checked against bus.json: the message names the parameter or field at fault.
    const messageOf = (body: unknown) => (body as { violations: Array<{ message: string }> }).violations[0]?.message;
    for (const [query, names] of [
      ['max_messages=0', '"max_messages"'],
      ['max_messages=11', '"max_messages"'],
      ['wait_seconds=21', '"wait_seconds"'],
      ['visibility_timeout=x', '"visibility_timeout"'],
      ['wait_seconds=0&max_message=3', 'unknown query parameter "max_message"'],
      ['wait_seconds=0&wait_seconds=1', '"wait_seconds" is given more than once'],
    ] as const) {
      const bad = await call('GET', `${consumerPath(house.consumer.clientId, 'messages')}?${query}`, tokens.consumer!);
      expect({ query, status: bad.status, rule: rule(bad.body), names: messageOf(bad.body)?.includes(names) }).toEqual({
        query,
        status: 400,
        rule: 'request.invalid',
        names: true,
      });
    }
    for (const [verb, body] of [
      ['ack', {}],
      ['ack', { receipt_handles: [] }],
      ['ack', { receipt_handles: ['a'], delay_seconds: 1 }],
      ['nack', { receipt_handles: ['a'], delay_seconds: 901 }],
      ['nack', { receipt_handles: ['a'], delay_seconds: 1.5 }],
      // Read as a message is (I-JSON): a member name twice is refused, not settled by keeping the last.
      ['ack', '{"receipt_handles":["a"],"receipt_handles":["b"]}'],
    ] as const) {
      const bad = await settle(house.consumer.clientId, tokens.consumer!, verb, body);
      expect({ body, status: bad.status, rule: rule(bad.body) }).toEqual({ body, status: 400, rule: 'request.invalid' });
    }
  }, 30_000);

  it('times the steps of each consumer call in Server-Timing, and of a refused one only those it got through', async () => {
    const m = message();
    await publishRaw(JSON.stringify(m));
    const receivedBy = async (c: string, bearer: string) => {
      const res = await call('GET', `${consumerPath(c, 'messages')}?wait_seconds=20`, bearer);
      expect(res.status).toBe(200);
      return { steps: stepsOf(res.headers.get('server-timing')), messages: (res.body as { messages: Received[] }).messages };
    };
    const received = await receivedBy(house.consumer.clientId, tokens.consumer!);
    expect(received.messages.map((r) => r.message_id)).toEqual([m.message_id]);
    expect(Object.keys(received.steps)).toEqual(['limits', 'auth', 'quota', 'validate', 'queue', 'total']);
    const steps = Object.entries(received.steps).filter(([name]) => name !== 'total');
    for (const [, ms] of steps) expect(ms).toBeGreaterThanOrEqual(0);
    expect(steps.reduce((sum, [, ms]) => sum + ms, 0)).toBeLessThanOrEqual(received.steps.total! + 0.05);

    for (const verb of ['nack', 'ack'] as const) {
      const [got] = verb === 'nack' ? received.messages : (await receivedBy(house.consumer.clientId, tokens.consumer!)).messages;
      const settled = await settle(house.consumer.clientId, tokens.consumer!, verb, { receipt_handles: [got!.receipt_handle] });
      expect(settled.body).toEqual({ results: [{ receipt_handle: got!.receipt_handle, status: 'done' }] });
      expect(Object.keys(stepsOf(settled.headers.get('server-timing')))).toEqual(['limits', 'auth', 'quota', 'validate', 'body', 'queue', 'total']);
    }
    const copy = await receiveAll(second.clientId, tokens.second!, 1);
    await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: copy.map((r) => r.receipt_handle) });

    const badParameter = await call('GET', `${consumerPath(house.consumer.clientId, 'messages')}?max_messages=11`, tokens.consumer!);
    expect(badParameter.status).toBe(400);
    expect(Object.keys(stepsOf(badParameter.headers.get('server-timing')))).toEqual(['limits', 'auth', 'quota', 'total']);
    const notOwn = await call('GET', `${consumerPath(house.consumer.clientId, 'messages')}?wait_seconds=0`, tokens.second!);
    expect(notOwn.status).toBe(403);
    expect(Object.keys(stepsOf(notOwn.headers.get('server-timing')))).toEqual(['limits', 'total']);
  }, 60_000);

  it("applies the consumer connection's quota before the body: 429 rate.limited, then quota.exceeded with Retry-After", async () => {
    const tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
    const bearer = await tenants.token(tenant.consumer);
    const c = tenant.consumer.clientId;
    const rule = (body: unknown) => (body as { violations: Array<{ rule: string }> }).violations.map((v) => v.rule);
    const receive = () => call('GET', `${consumerPath(c, 'messages', tenant.workspaceId)}?wait_seconds=0`, bearer);
    expect((await receive()).status).toBe(200);

    // Through the admin API's store, which announces the change on the control topic: the cached
    // allowance is dropped at once. The first receive let in under the new tier opens a fresh
    // one-second window, and the next call within it is over the rate.
    await tenants.admin.setQuota('workspace', tenant.workspaceId, { tier: 'custom', perSecond: 1, burst: 1, perDay: 1000 });
    // Both answers of the pair under the new tier: when the change lands between the two calls, the
    // receive still answers under the old one (its RateLimit-Policy says so), and the pair is tried again.
    const newPolicy = '"burst";q=1;w=1;bus-burst=1, "daily";q=1000;w=86400';
    const burst = await eventually(
      async () => [await receive(), await call('GET', consumerPath(c, 'skills', tenant.workspaceId), bearer)],
      (pair) => pair[0]?.status === 200 && pair[1]?.status === 429 && pair.every((answer) => answer?.headers.get('ratelimit-policy') === newPolicy),
      { intervalMs: 100, timeoutMs: 2_000, retryReadErrors: false, what: 'the new tier of 1/s applied' },
    );
    expect(rule(burst[1]?.body)).toEqual(['rate.limited']);
    expect(Number(burst[1]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // RateLimit-Policy and RateLimit name the new tier and what each answer left of it.
    for (const answer of burst) expect(answer.headers.get('ratelimit-policy')).toBe(newPolicy);
    expect(rateLimitLeft(burst[0]!.headers).burst?.r).toBe(0);
    expect(rateLimitLeft(burst[1]!.headers)).toEqual({ burst: { r: 0, t: Number(burst[1]?.headers.get('retry-after')) } });

    await tenants.admin.setQuota('workspace', tenant.workspaceId, { tier: 'custom', perSecond: 200, burst: 400, perDay: 1 });
    await eventually(receive, (res) => res.status === 429 && rule(res.body).includes('quota.exceeded'), {
      intervalMs: 100,
      timeoutMs: 2_000,
      retryReadErrors: false,
      what: 'the new daily allowance of 1 applied',
    });
    // A body the route would refuse with 400: the quota answers first, so nothing read it.
    for (const route of ['ack', 'nack'] as const) {
      const exceeded = await call('POST', consumerPath(c, route, tenant.workspaceId), bearer, { not: 'a settle body' });
      expect([exceeded.status, rule(exceeded.body)]).toEqual([429, ['quota.exceeded']]);
      const retryAfter = Number(exceeded.headers.get('retry-after'));
      const untilMidnight = (Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000;
      expect(retryAfter).toBeGreaterThan(0);
      expect(Math.abs(retryAfter - untilMidnight)).toBeLessThan(60);
      expect(rateLimitLeft(exceeded.headers).daily).toEqual({ r: 0, t: retryAfter });
    }
    const receiving = await receive();
    expect([receiving.status, rule(receiving.body)]).toEqual([429, ['quota.exceeded']]);
  }, 30_000);

  it('answers HEAD on receive checked as a GET, at once and leasing nothing: the message stays for the next receive', async () => {
    const m = message();
    await publishRaw(JSON.stringify(m));
    const c = house.consumer.clientId;
    await eventually(
      () => call('GET', `${consumerPath(c, 'peek')}?correlation_id=${m.correlation_id}`, tokens.consumer!),
      (res) => (res.body as { messages?: Array<{ message_id: string }> }).messages?.[0]?.message_id === m.message_id,
      { what: 'the message queued for the consumer' },
    );
    const head = (query: string, bearer = tokens.consumer!) =>
      fetch(`${bus.busUrl}${consumerPath(c, 'messages')}?${query}`, { method: 'HEAD', headers: { Authorization: `Bearer ${bearer}` } });
    const answered = await head('wait_seconds=20&visibility_timeout=43200');
    expect([answered.status, answered.headers.get('content-type'), await answered.text()]).toEqual([200, 'application/json; charset=utf-8', '']);
    expect((await head('wait_seconds=21')).status).toBe(400);
    expect((await head('wait_seconds=0', tokens.second!)).status).toBe(403);
    const [got, ...rest] = await receiveAs(c, tokens.consumer!, 'wait_seconds=0');
    expect([got?.message_id, got?.receive_count, rest]).toEqual([m.message_id, 1, []]);
    await settle(c, tokens.consumer!, 'ack', { receipt_handles: [got!.receipt_handle] });
    const copy = await receiveAll(second.clientId, tokens.second!, 1);
    await settle(second.clientId, tokens.second!, 'ack', { receipt_handles: copy.map((r) => r.receipt_handle) });
  }, 60_000);

  it('answers the skills route with no registrations while the portal has bound none', async () => {
    const res = await call('GET', consumerPath(house.consumer.clientId, 'skills'), tokens.consumer!);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ registrations: [] });
  });
});
