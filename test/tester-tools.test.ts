import { randomUUID } from 'node:crypto';
import { BusProducer } from '@bus/client';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The tester's tools on the compiled all-in-one bus (docs/testing-tools.md): a publish
 * traced through enqueue, receive, nack and ack; a refused publish listed with its violations and no
 * body; a story's state and messages; the operator's trace; the usual 403s for anyone else.
 */
const SYSTEM_ID = 'storyteller.web';
const ALL_TYPES = Object.keys(som.examples);
const adminApi = createOpenApiChecker(openapi.admin);

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
let secondConsumer: { clientId: string; clientSecret: string };
const tokens: Record<'producer' | 'consumer' | 'second' | 'otherProducer', string> = { producer: '', consumer: '', second: '', otherProducer: '' };
let producer: BusProducer;

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
  other = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
  secondConsumer = await tenants.admin.createConnection({ appId: house.appId, kind: 'consumer' });
  tokens.producer = await tenants.token(house.producer);
  tokens.consumer = await tenants.token(house.consumer);
  tokens.second = await tenants.token(secondConsumer);
  tokens.otherProducer = await tenants.token(other.producer);
  producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

function message(type = 'telling.started', correlationId = `c-${randomUUID()}`): Record<string, unknown> & { message_id: string; correlation_id: string } {
  return { ...(som.examples[type] as Record<string, unknown>), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString() };
}

const tenantPath = (route: string, t = house.workspaceId) => `/v1/tenants/${t}/${route}`;
const get = (route: string, bearer: string, t?: string) => bearerCall(bus, 'GET', tenantPath(route, t), bearer);

interface Trace {
  message_id: string;
  correlation_id: string;
  kafka: { partition: number; offset: string };
  deliveries: Array<{
    consumer_id: string;
    state: string;
    receive_count: number;
    nack_count: number;
    acked_at: string | null;
    last_nacked_at: string | null;
    enqueued_at: string | null;
  }>;
}
const deliveryOf = (trace: Trace, consumerId: string) => trace.deliveries.find((d) => d.consumer_id === consumerId);

async function traceUntil(messageId: string, done: (trace: Trace) => boolean, what: string): Promise<Trace> {
  return eventually(
    async () => {
      const res = await get(`messages/${messageId}`, tokens.producer);
      expect(res.status).toBe(200);
      return res.body as Trace;
    },
    done,
    { timeoutMs: 30_000, retryReadErrors: false, what },
  );
}

describe('message trace', () => {
  it('follows a publish through enqueue, receive, nack, receive again and ack, per consumer connection, never with the body', async () => {
    const m = message();
    expect((await producer.publish(m)).status).toBe(202);

    const enqueued = await traceUntil(m.message_id, (t) => t.deliveries.every((d) => d.state === 'queued'), 'both copies enqueued');
    expect(enqueued).toMatchObject({
      message_id: m.message_id,
      message_type: 'telling.started',
      correlation_id: m.correlation_id,
      producer_connection_id: house.producer.clientId,
    });
    expect(enqueued.deliveries.map((d) => d.consumer_id).sort()).toEqual([house.consumer.clientId, secondConsumer.clientId].sort());
    expect(enqueued.kafka.partition).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(enqueued)).not.toContain(JSON.stringify(m.payload));

    const receive = async () => {
      const res = await bearerCall(bus, 'GET', `${tenantPath(`consumers/${house.consumer.clientId}/messages`)}?wait_seconds=10`, tokens.consumer);
      const [got] = (res.body as { messages: Array<{ receipt_handle: string; message_id: string }> }).messages;
      expect(got?.message_id).toBe(m.message_id);
      return got!.receipt_handle;
    };
    const settle = (route: 'ack' | 'nack', handle: string) =>
      bearerCall(bus, 'POST', tenantPath(`consumers/${house.consumer.clientId}/${route}`), tokens.consumer, { receipt_handles: [handle] });

    const first = await receive();
    const leased = deliveryOf((await get(`messages/${m.message_id}`, tokens.producer)).body as Trace, house.consumer.clientId);
    expect(leased).toMatchObject({ state: 'leased', receive_count: 1, nack_count: 0 });
    await settle('nack', first);
    expect(deliveryOf((await get(`messages/${m.message_id}`, tokens.producer)).body as Trace, house.consumer.clientId)).toMatchObject({
      state: 'queued',
      receive_count: 1,
      nack_count: 1,
      last_nacked_at: expect.any(String),
    });
    await settle('ack', await receive());
    const done = (await get(`messages/${m.message_id}`, tokens.producer)).body as Trace;
    expect(deliveryOf(done, house.consumer.clientId)).toMatchObject({ state: 'acked', receive_count: 2, nack_count: 1, acked_at: expect.any(String) });
    // The other consumer's copy is its own.
    expect(deliveryOf(done, secondConsumer.clientId)).toMatchObject({ state: 'queued', receive_count: 0, nack_count: 0 });
  }, 90_000);

  it('is the same record for the operator through the admin API', async () => {
    const m = message();
    await producer.publish(m);
    const producerView = await traceUntil(m.message_id, (t) => t.deliveries.every((d) => d.state === 'queued'), 'enqueued');
    const path = `/api/admin/workspaces/${house.workspaceId}/messages/${m.message_id}`;
    const operator = `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`;
    const res = await fetchObserved(`${bus.portalUrl}${path}`, { headers: { Authorization: operator } });
    adminApi.check('GET', path, res);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(producerView);
    const unknown = await fetchObserved(`${bus.portalUrl}/api/admin/workspaces/${other.workspaceId}/messages/${m.message_id}`, {
      headers: { Authorization: operator },
    });
    adminApi.check('GET', path, unknown);
    expect(unknown.status).toBe(404);
  }, 60_000);

  it("answers 404 for a message_id the workspace did not accept (another workspace's included) and 400 for one that is not a UUID", async () => {
    const theirs = message();
    await new BusProducer({ baseUrl: bus.busUrl, ...other.producer }).publish(theirs);
    expect((await get(`messages/${theirs.message_id}`, tokens.producer)).status).toBe(404);
    expect((await get(`messages/${randomUUID()}`, tokens.producer)).body).toMatchObject({ violations: [{ rule: 'message.unknown' }] });
    const malformed = await get('messages/not-a-uuid', tokens.producer);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ violations: [{ rule: 'request.invalid' }] });
  }, 30_000);
});

describe('recent refusals', () => {
  it('lists refused publishes and dry runs, newest first, with their violations and without the body', async () => {
    const invalid = { ...message(), payload: { secret_marker: 'never-listed-e7c1' } };
    const outOfSequence = message('telling.exposed');
    expect((await bearerCall(bus, 'POST', tenantPath('messages'), tokens.producer, invalid)).status).toBe(400);
    expect((await bearerCall(bus, 'POST', tenantPath('validate'), tokens.producer, outOfSequence)).status).toBe(409);
    expect((await bearerCall(bus, 'POST', tenantPath('messages'), tokens.producer, '{"message_id": 12, not json')).status).toBe(400);

    const listed = await eventually(
      async () => {
        const res = await get('refusals', tokens.producer);
        expect(res.status).toBe(200);
        return res.body as { connection_id: string; refusals: Array<Record<string, unknown>>; rate_limited: Record<string, unknown> };
      },
      (body) => body.refusals.length >= 3,
      { timeoutMs: 20_000, retryReadErrors: false, what: 'three refusals recorded' },
    );
    expect(listed.connection_id).toBe(house.producer.clientId);
    const [unreadable, sequence, schema] = listed.refusals;
    expect(schema).toMatchObject({
      mode: 'publish',
      message_id: invalid.message_id,
      message_type: 'telling.started',
      correlation_id: invalid.correlation_id,
      status: 400,
    });
    expect((schema?.violations as Array<{ source: string }>)[0]?.source).toBe('schema');
    expect(sequence).toMatchObject({
      mode: 'validate',
      message_id: outOfSequence.message_id,
      status: 409,
      violations: [{ rule: 'sequence.telling.not_started' }],
    });
    expect(unreadable).toMatchObject({ mode: 'publish', message_id: null, message_type: null, correlation_id: null, status: 400 });
    expect(JSON.stringify(listed)).not.toContain('never-listed-e7c1');
    expect(listed.rate_limited).toEqual({ rate_limited: 0, quota_exceeded: 0, last_refused_at: null });
  }, 60_000);

  it("are the calling connection's own: another producer of the workspace sees only its own", async () => {
    const sibling = await tenants.admin.createConnection({ appId: house.appId, kind: 'producer' });
    const res = await get('refusals', await tenants.token(sibling));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      connection_id: sibling.clientId,
      refusals: [],
      next_before: null,
      rate_limited: { rate_limited: 0, quota_exceeded: 0, last_refused_at: null },
    });
  }, 30_000);
});

describe('story view', () => {
  it('shows the sequence state behind a 409 and the accepted messages in order', async () => {
    const correlationId = `c-${randomUUID()}`;
    const started = message('telling.started', correlationId);
    const exposed = message('telling.exposed', correlationId);
    const context = message('story.context', correlationId);
    for (const m of [started, exposed, context]) expect((await producer.publish(m)).status).toBe(202);
    const again = await producer.publish(message('telling.started', correlationId)).catch((e: unknown) => e);
    expect(again).toMatchObject({ status: 409, rule: 'sequence.telling.already_started' });

    const res = await get(`stories/${correlationId}`, tokens.producer);
    expect(res.status).toBe(200);
    const story = res.body as { state: { telling: { phase: string } }; messages: Array<{ message_id: string; message_type: string }>; truncated: boolean };
    expect(story.state.telling.phase).toBe('started');
    expect(story.messages.map((x) => [x.message_id, x.message_type])).toEqual([
      [started.message_id, 'telling.started'],
      [exposed.message_id, 'telling.exposed'],
      [context.message_id, 'story.context'],
    ]);
    expect(story.truncated).toBe(false);
    expect(JSON.stringify(story)).not.toContain('payload');
  }, 60_000);

  it('answers 404 for a correlation id the workspace holds nothing for, 400 for one that is not an identifier', async () => {
    expect((await get(`stories/c-${randomUUID()}`, tokens.producer)).body).toMatchObject({ violations: [{ rule: 'story.unknown' }] });
    expect((await get('stories/%20bad', tokens.producer)).status).toBe(400);
  }, 30_000);
});

describe('who may read', () => {
  it.each([['messages/00000000-0000-4000-8000-000000000001'], ['refusals'], ['stories/c-1']])(
    "%s: a consumer token is 403 producer.not_registered, another workspace's producer 403 tenant.mismatch, no token 401",
    async (route) => {
      expect((await get(route, tokens.consumer)).body).toMatchObject({ violations: [{ rule: 'producer.not_registered' }] });
      expect((await get(route, tokens.second)).status).toBe(403);
      expect((await get(route, tokens.otherProducer)).body).toMatchObject({ violations: [{ rule: 'tenant.mismatch' }] });
      const anonymous = await fetchObserved(`${bus.busUrl}${tenantPath(route)}`);
      expect(anonymous.status).toBe(401);
    },
    30_000,
  );
});
