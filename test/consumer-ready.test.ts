import { randomUUID } from 'node:crypto';
import { BusConsumer, BusProducer, BusRefusedError, TokenRequestError } from '@bus/client';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * A consumer's readiness (GET /v1/tenants/{t}/consumers/{c}) and a story's export
 * (GET /v1/tenants/{t}/stories/{correlation_id}/export) on the compiled all-in-one bus, answers checked
 * against bus.json, and the client library's ready() and exportStory() over them (docs/testing-tools.md).
 */
const SYSTEM_ID = 'storyteller.web';
const busApi = createOpenApiChecker(openapi.bus);

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
const tokens: Record<'producer' | 'consumer' | 'otherProducer' | 'otherConsumer', string> = {
  producer: '',
  consumer: '',
  otherProducer: '',
  otherConsumer: '',
};

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  other = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  tokens.producer = await tenants.token(house.producer);
  tokens.consumer = await tenants.token(house.consumer);
  tokens.otherProducer = await tenants.token(other.producer);
  tokens.otherConsumer = await tenants.token(other.consumer);
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

const consumerPath = (c: string, t = house.workspaceId) => `/v1/tenants/${t}/consumers/${c}`;
const exportPath = (correlationId: string, t = house.workspaceId) => `/v1/tenants/${t}/stories/${encodeURIComponent(correlationId)}/export`;
const rulesOf = (body: unknown) => (body as { violations: Array<{ rule: string }> }).violations.map((v) => v.rule);

function message(type: string, correlationId: string): Record<string, unknown> & { message_id: string } {
  return { ...(som.examples[type] as Record<string, unknown>), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString() };
}

/** The export as the bus sends it (NDJSON is not one JSON document), checked against bus.json: the answer, then every line. */
async function exported(correlationId: string, bearer: string) {
  const res = await fetch(`${bus.busUrl}${exportPath(correlationId)}`, { headers: { Authorization: `Bearer ${bearer}` } });
  const text = await res.text();
  const ndjson = (res.headers.get('content-type') ?? '').startsWith('application/x-ndjson');
  busApi.check('GET', exportPath(correlationId), { status: res.status, headers: res.headers, body: ndjson ? text : JSON.parse(text) });
  if (!ndjson) return { status: res.status, text, lines: [], body: JSON.parse(text) as unknown };
  const lines = text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
  for (const line of lines) busApi.checkSchema('StoryExportLine', line);
  return { status: res.status, text, lines, body: undefined };
}

describe('consumer readiness', () => {
  it("answers the consumer's own state and queue counts", async () => {
    const res = await bearerCall(bus, 'GET', consumerPath(house.consumer.clientId), tokens.consumer);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      consumer_id: house.consumer.clientId,
      workspace_id: house.workspaceId,
      status: 'active',
      created_at: expect.any(String),
      queue: expect.objectContaining({ depth: expect.any(Number), in_flight: 0, dead_letters: 0 }),
    });
  });

  it("delivers a message published after the connection's creation and before its first receive: the queue exists from the start", async () => {
    const fresh = await tenants.admin.createConnection({ appId: house.appId, kind: 'consumer' });
    const consumer = new BusConsumer({ baseUrl: bus.busUrl, ...fresh });
    const m = message('telling.started', `ready-${randomUUID()}`);
    // Published before the new consumer ever calls the bus.
    expect((await new BusProducer({ baseUrl: bus.busUrl, ...house.producer }).publish(m)).status).toBe(202);
    const ready = await consumer.ready();
    expect(ready).toMatchObject({ consumer_id: fresh.clientId, workspace_id: house.workspaceId, status: 'active' });
    const [got] = await eventually(
      () => consumer.receive({ waitSeconds: 5 }),
      (messages) => messages.length > 0,
      { timeoutMs: 30_000, what: 'the message published before the first receive' },
    );
    expect(got?.message_id).toBe(m.message_id);
    expect((await consumer.ready()).queue).toMatchObject({ depth: 1, in_flight: 1, visible: 0 });
    await consumer.ack([got!.receipt_handle]);
    expect((await consumer.ready()).queue).toEqual({ depth: 0, visible: 0, in_flight: 0, delayed: 0, dead_letters: 0, oldest_age_seconds: null });
  }, 60_000);

  it('answers each of many concurrent asks with the counts as they were when it asked, the ones after an ack with the ack', async () => {
    const fresh = await tenants.admin.createConnection({ appId: house.appId, kind: 'consumer' });
    const consumer = new BusConsumer({ baseUrl: bus.busUrl, ...fresh });
    const token = await tenants.token(fresh);
    const m = message('telling.started', `ready-${randomUUID()}`);
    expect((await new BusProducer({ baseUrl: bus.busUrl, ...house.producer }).publish(m)).status).toBe(202);
    const [got] = await eventually(
      () => consumer.receive({ waitSeconds: 5 }),
      (messages) => messages.length > 0,
      { timeoutMs: 30_000, what: 'the published message' },
    );
    const ask = async () => {
      const res = await bearerCall(bus, 'GET', consumerPath(fresh.clientId), token);
      return { status: res.status, queue: (res.body as { queue: unknown }).queue };
    };
    const leased = { depth: 1, visible: 0, in_flight: 1, delayed: 0, dead_letters: 0, oldest_age_seconds: expect.any(Number) };
    expect(await Promise.all(Array.from({ length: 8 }, ask))).toEqual(Array.from({ length: 8 }, () => ({ status: 200, queue: leased })));
    await consumer.ack([got!.receipt_handle]);
    // Asked at once after the burst above: still the counts after the ack, never an earlier read's.
    const empty = { depth: 0, visible: 0, in_flight: 0, delayed: 0, dead_letters: 0, oldest_age_seconds: null };
    expect(await Promise.all(Array.from({ length: 8 }, ask))).toEqual(Array.from({ length: 8 }, () => ({ status: 200, queue: empty })));
  }, 60_000);

  it.each([
    ["another consumer's token", () => tokens.otherConsumer, () => consumerPath(house.consumer.clientId, other.workspaceId), 'consumer.mismatch'],
    ["another workspace's path", () => tokens.consumer, () => consumerPath(house.consumer.clientId, other.workspaceId), 'tenant.mismatch'],
    ['a producer token', () => tokens.producer, () => consumerPath(house.producer.clientId), 'producer.not_registered'],
  ])('refuses %s with 403', async (_what, bearer, path, rule) => {
    const res = await bearerCall(bus, 'GET', path(), bearer());
    expect(res.status).toBe(403);
    expect(rulesOf(res.body)).toEqual([rule]);
  });

  it('refuses no token with 401, and ready() throws it at once', async () => {
    const res = await bearerCall(bus, 'GET', consumerPath(house.consumer.clientId), 'not-a-token');
    expect(res.status).toBe(401);
    const wrongId = new BusConsumer({ baseUrl: bus.busUrl, clientId: other.consumer.clientId, clientSecret: house.consumer.clientSecret });
    // Credentials that are not a connection's never reach the route: the token route refuses them.
    await expect(wrongId.ready()).rejects.toBeInstanceOf(TokenRequestError);
    const asProducer = new BusConsumer({ baseUrl: bus.busUrl, ...house.producer });
    await expect(asProducer.ready()).rejects.toEqual(expect.objectContaining({ status: 403, rule: 'producer.not_registered' }));
    await expect(asProducer.ready()).rejects.toBeInstanceOf(BusRefusedError);
  });
});

describe('story export', () => {
  const correlationId = `export-${randomUUID()}`;
  // Bytes as a producer may send them: spacing and key order the bus keeps, never re-serialises.
  const started = message('telling.started', correlationId);
  const startedBytes = JSON.stringify(started, null, 1).replace('{', '{  ');
  const exposed = message('telling.exposed', correlationId);

  beforeAll(async () => {
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    expect((await producer.publish(startedBytes)).status).toBe(202);
    expect((await producer.publish(exposed)).status).toBe(202);
    const consumer = new BusConsumer({ baseUrl: bus.busUrl, ...house.consumer });
    // The house consumer receives and acks the story's first message; the second stays queued.
    const [first] = await eventually(
      () => consumer.receive({ waitSeconds: 5, maxMessages: 1 }),
      (ms) => ms.some((m) => m.message_id === started.message_id),
      { timeoutMs: 30_000, what: 'the first message of the story' },
    );
    await consumer.ack([first!.receipt_handle]);
  }, 60_000);

  it("answers the story, each message's exact bytes and each consumer's copy, then end", async () => {
    const res = await exported(correlationId, tokens.producer);
    expect(res.status).toBe(200);
    // One delivery line per consumer connection of the workspace after each message (the readiness test added one).
    const consumers = new Set(res.lines.filter((l) => l.type === 'delivery').map((l) => l.consumer_id)).size;
    expect(consumers).toBeGreaterThanOrEqual(1);
    const copies = Array<string>(consumers).fill('delivery');
    expect(res.lines.map((l) => l.type)).toEqual(['story', 'message', ...copies, 'message', ...copies, 'end']);
    const [story, first] = res.lines;
    const second = res.lines[2 + consumers];
    const end = res.lines.at(-1)!;
    const houseCopy = (id: string) => res.lines.find((l) => l.type === 'delivery' && l.message_id === id && l.consumer_id === house.consumer.clientId);
    expect(story).toMatchObject({ correlation_id: correlationId, state: expect.any(Object) });
    expect(first).toMatchObject({ message_id: started.message_id, message_type: 'telling.started', body: startedBytes, stored: true });
    expect(second).toMatchObject({ message_id: exposed.message_id, body: JSON.stringify(exposed) });
    const firstCopy = houseCopy(started.message_id)!;
    expect(firstCopy).toMatchObject({ state: 'acked', acked: true, receive_count: 1, acked_at: expect.any(String), first_received_at: expect.any(String) });
    // Received after it was enqueued and before it was acked.
    const at = (field: string) => Date.parse(String(firstCopy[field]));
    expect(at('first_received_at')).toBeGreaterThanOrEqual(at('enqueued_at'));
    expect(at('first_received_at')).toBeLessThanOrEqual(at('acked_at'));
    const secondCopy = houseCopy(exposed.message_id)!;
    expect(secondCopy).toMatchObject({ acked: false, acked_at: null, receive_count: expect.any(Number) });
    // A copy never handed out has no first receive.
    expect(secondCopy.first_received_at === null).toBe(secondCopy.receive_count === 0);
    expect(end).toEqual({
      type: 'end',
      messages: 2,
      deliveries: 2 * consumers,
      bytes: Buffer.byteLength(res.text) - Buffer.byteLength(`${JSON.stringify(end)}\n`),
      truncated: false,
    });
  });

  it('is what the client library returns', async () => {
    const fromClient = await new BusProducer({ baseUrl: bus.busUrl, ...house.producer }).exportStory(correlationId);
    expect(fromClient.complete).toBe(true);
    expect(fromClient.lines.filter((l) => l.type === 'message').map((l) => l.body)).toEqual([startedBytes, JSON.stringify(exposed)]);
  });

  it('answers 404 story.unknown for a correlation id the workspace never saw, and for another workspace', async () => {
    expect(await exported(`never-${randomUUID()}`, tokens.producer)).toMatchObject({ status: 404 });
    const res = await exported(correlationId, tokens.otherProducer);
    // The other workspace's token on this workspace's path is refused before anything is read.
    expect(res).toMatchObject({ status: 403 });
    expect(rulesOf(res.body)).toEqual(['tenant.mismatch']);
    const own = await fetch(`${bus.busUrl}${exportPath(correlationId, other.workspaceId)}`, { headers: { Authorization: `Bearer ${tokens.otherProducer}` } });
    expect(own.status).toBe(404);
    expect(rulesOf(await own.json())).toEqual(['story.unknown']);
  });

  it("refuses a consumer's token (403 producer.not_registered) and a correlation id that is not a SOM identifier (400)", async () => {
    const asConsumer = await exported(correlationId, tokens.consumer);
    expect(asConsumer.status).toBe(403);
    expect(rulesOf(asConsumer.body)).toEqual(['producer.not_registered']);
    const invalid = await exported('-no', tokens.producer);
    expect(invalid.status).toBe(400);
    expect(rulesOf(invalid.body)).toEqual(['request.invalid']);
  });
});
