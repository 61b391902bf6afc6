import { randomUUID } from 'node:crypto';
import { BusConsumer, BusProducer, type ReceivedMessage } from '@bus/client';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, withClient } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The consumer's tools on the compiled all-in-one bus (docs/testing-tools.md): peek leaves
 * the queue as it was; each Sandbox fault does what it says and loses nothing; a dead-lettered head
 * blocks its correlation id (not skipped) until the operator redrives or discards it. Each scenario
 * has its own consumer connection, its settings made before its first call (so the first
 * authentication reads them with the connection).
 */
const SYSTEM_ID = 'storyteller.web';
const adminApi = createOpenApiChecker(openapi.admin);

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let producer: BusProducer;
let operator: string;
let producerToken: string;

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  const auditSystem = String((som.examples['system.audit'] as { system_id: string }).system_id);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID, auditSystem], messageTypes: ['story.context', 'system.audit'] });
  producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
  producerToken = await tenants.token(house.producer);
  operator = `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`;
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

interface Consumer {
  clientId: string;
  token: string;
  client: BusConsumer;
}

async function consumerWith(settings: { faults?: Record<string, number>; maxReceives?: number }): Promise<Consumer> {
  const credential = await tenants.admin.createConnection({ appId: house.appId, kind: 'consumer' });
  if (settings.faults) expect((await admin('PUT', `/api/admin/connections/${credential.clientId}/faults`, settings.faults)).status).toBe(200);
  if (settings.maxReceives !== undefined) {
    const res = await admin('PUT', `/api/admin/connections/${credential.clientId}/dead-letter-policy`, { max_receives: settings.maxReceives });
    expect(res.status).toBe(200);
    expect((res.body as { consumer_tools: { max_receives: number } }).consumer_tools.max_receives).toBe(settings.maxReceives);
  }
  return { clientId: credential.clientId, token: await tenants.token(credential), client: new BusConsumer({ baseUrl: bus.busUrl, ...credential }) };
}

async function admin(method: string, path: string, body?: unknown) {
  const res = await fetchObserved(`${bus.portalUrl}${path}`, {
    method,
    headers: { Authorization: operator, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  adminApi.check(method, path, res);
  return res;
}

async function publish(correlationId: string, type = 'story.context'): Promise<string> {
  const messageId = randomUUID();
  const res = await producer.publish({
    ...(som.examples[type] as Record<string, unknown>),
    message_id: messageId,
    correlation_id: correlationId,
    occurred_at: new Date().toISOString(),
  });
  expect(res.status).toBe(202);
  return messageId;
}

interface DeliveryTrace {
  consumer_id: string;
  state: string;
  receive_count: number;
  visible_at: string | null;
  enqueued_at: string | null;
  faults: Array<{ kind: string; detail_ms: number | null }>;
  dead_letter: { resolution: string | null } | null;
}
async function traceOf(messageId: string, consumerId: string): Promise<DeliveryTrace> {
  const res = await bearerCall(bus, 'GET', `/v1/tenants/${house.workspaceId}/messages/${messageId}`, producerToken);
  expect(res.status).toBe(200);
  return (res.body as { deliveries: DeliveryTrace[] }).deliveries.find((d) => d.consumer_id === consumerId)!;
}
const enqueued = (messageId: string, consumer: Consumer) =>
  eventually(
    () => traceOf(messageId, consumer.clientId),
    (d) => d.state !== 'not_enqueued',
    { timeoutMs: 30_000, what: `${messageId} enqueued` },
  );

const peekPath = (c: Consumer, query = '') => `/v1/tenants/${house.workspaceId}/consumers/${c.clientId}/peek${query}`;
const peek = async (c: Consumer, query = '') => {
  const res = await bearerCall(bus, 'GET', peekPath(c, query), c.token);
  expect(res.status).toBe(200);
  return (res.body as { messages: Array<{ message_id: string; receive_count: number; envelope: unknown }> }).messages;
};
const ids = (messages: ReadonlyArray<{ message_id: string }>) => messages.map((m) => m.message_id);

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${bus.busUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('peek', () => {
  it('shows what a receive would lease, in its order, leasing nothing; filters; another consumer is 403', async () => {
    const c = await consumerWith({});
    const x = `peek-x-${randomUUID()}`;
    const y = `peek-y-${randomUUID()}`;
    const x1 = await publish(x);
    const y1 = await publish(y, 'system.audit');
    const x2 = await publish(x);
    for (const id of [x1, y1, x2]) await enqueued(id, c);

    // Heads by age, each followed by the rest of its correlation id: x1, x2, then y1.
    const seen = await peek(c, '?max_messages=10');
    expect(ids(seen)).toEqual([x1, x2, y1]);
    expect(seen.every((m) => m.receive_count === 0 && m.envelope !== null)).toBe(true);
    expect(ids(await peek(c, '?max_messages=1'))).toEqual([x1]);
    expect(ids(await peek(c, `?correlation_id=${y}`))).toEqual([y1]);
    expect(ids(await peek(c, '?message_type=system.audit'))).toEqual([y1]);
    // Every correlation id was looked through (the queue holds two), so the filtered answer is whole.
    const typed = await bearerCall(bus, 'GET', peekPath(c, '?message_type=system.audit'), c.token);
    expect((typed.body as { truncated: boolean }).truncated).toBe(false);
    // Nothing leased, nothing counted.
    for (const id of [x1, y1, x2]) expect(await traceOf(id, c.clientId)).toMatchObject({ state: 'queued', receive_count: 0 });

    const received = await c.client.receive({ maxMessages: 10, waitSeconds: 0 });
    expect(ids(received)).toEqual([x1, x2, y1]);
    expect(received.map((m) => m.receive_count)).toEqual([1, 1, 1]);
    expect(await peek(c)).toEqual([]);

    const other = await consumerWith({});
    expect((await bearerCall(bus, 'GET', peekPath(c), other.token)).status).toBe(403);
    expect((await bearerCall(bus, 'GET', peekPath(c), producerToken)).status).toBe(403);
    expect((await bearerCall(bus, 'GET', peekPath(c, '?max_messages=11'), c.token)).status).toBe(400);
  }, 60_000);
});

describe('consumer fault injection', () => {
  /** Receives one at a time and acks each, until `expected` messages were acked for good; resolves with every message handed out, in order. */
  async function drain(c: Consumer, expected: string[]): Promise<ReceivedMessage[]> {
    const handedOut: ReceivedMessage[] = [];
    await eventually(
      async () => {
        const [m] = await c.client.receive({ maxMessages: 1, waitSeconds: 2 });
        if (m) {
          handedOut.push(m);
          await c.client.ack([m.receipt_handle]);
        }
        return Promise.all(expected.map((id) => traceOf(id, c.clientId)));
      },
      (traces) => traces.every((t) => t.state === 'acked'),
      { timeoutMs: 30_000, intervalMs: 1, what: 'every message acked' },
    );
    return handedOut;
  }

  it('duplicates: every lost ack brings the message back once, in order, nothing lost', async () => {
    const c = await consumerWith({ faults: { duplicate_rate: 1, delay_ms: 0, early_expiry_rate: 0 } });
    const before = await metric('bus_consumer_faults_injected_total', 'kind="duplicate"');
    const g = `dup-${randomUUID()}`;
    const g1 = await publish(g);
    const g2 = await publish(g);
    for (const id of [g1, g2]) await enqueued(id, c);

    const handedOut = await drain(c, [g1, g2]);
    expect(ids(handedOut)).toEqual([g1, g1, g2, g2]);
    expect(handedOut.map((m) => m.receive_count)).toEqual([1, 2, 1, 2]);
    for (const id of [g1, g2]) expect((await traceOf(id, c.clientId)).faults).toEqual([expect.objectContaining({ kind: 'duplicate', detail_ms: null })]);
    expect(await metric('bus_consumer_faults_injected_total', 'kind="duplicate"')).toBe(before + 2);
  }, 60_000);

  it('delay: a message becomes receivable only the added delay after it was enqueued', async () => {
    const c = await consumerWith({ faults: { duplicate_rate: 0, delay_ms: 1500, early_expiry_rate: 0 } });
    const h1 = await publish(`delay-${randomUUID()}`);
    const trace = await enqueued(h1, c);
    const [m] = await c.client.receive({ maxMessages: 1, waitSeconds: 10 });
    expect(m?.message_id).toBe(h1);
    expect(Date.now() - Date.parse(trace.enqueued_at!)).toBeGreaterThanOrEqual(1500);
    expect(await c.client.ack([m!.receipt_handle])).toEqual([expect.objectContaining({ status: 'done' })]);
    expect((await traceOf(h1, c.clientId)).faults).toEqual([expect.objectContaining({ kind: 'delay', detail_ms: 1500 })]);
  }, 60_000);

  it('early lease expiry: the lease ends at half its visibility timeout, the message comes back, its old handle is stale', async () => {
    const c = await consumerWith({ faults: { duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 1 } });
    const i1 = await publish(`expiry-${randomUUID()}`);
    await enqueued(i1, c);
    const [first] = await c.client.receive({ maxMessages: 1, waitSeconds: 5, visibilityTimeoutSeconds: 4 });
    expect(first?.message_id).toBe(i1);
    const receivedAt = Date.now();
    const [again] = await c.client.receive({ maxMessages: 1, waitSeconds: 10, visibilityTimeoutSeconds: 4 });
    expect(again).toMatchObject({ message_id: i1, receive_count: 2 });
    // Back after about 2 s (half of 4), well before the 4 s lease would have ended.
    expect(Date.now() - receivedAt).toBeLessThan(3900);
    expect(await c.client.ack([first!.receipt_handle])).toEqual([expect.objectContaining({ status: 'failed', code: 'receipt_handle.stale' })]);
    expect(await c.client.ack([again!.receipt_handle])).toEqual([expect.objectContaining({ status: 'done' })]);
    const trace = await traceOf(i1, c.clientId);
    expect(trace.faults).toEqual([
      expect.objectContaining({ kind: 'early_expiry', detail_ms: 2000 }),
      expect.objectContaining({ kind: 'early_expiry', detail_ms: 2000 }),
    ]);
  }, 60_000);

  it('is refused for a producer connection and shown on the connection', async () => {
    const res = await admin('PUT', `/api/admin/connections/${house.producer.clientId}/faults`, { duplicate_rate: 0.5, delay_ms: 0, early_expiry_rate: 0 });
    expect(res.status).toBe(409);
    const c = await consumerWith({ faults: { duplicate_rate: 0.25, delay_ms: 10, early_expiry_rate: 0 } });
    const shown = await admin('GET', `/api/admin/connections/${c.clientId}`);
    expect((shown.body as { consumer_tools: unknown }).consumer_tools).toEqual({
      faults: { duplicate_rate: 0.25, delay_ms: 10, early_expiry_rate: 0 },
      max_receives: null,
    });
    const off = await admin('PUT', `/api/admin/connections/${c.clientId}/faults`, { duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 0 });
    expect((off.body as { consumer_tools: unknown }).consumer_tools).toBeNull();
  }, 30_000);
});

describe('dead letters', () => {
  it('a dead-lettered head blocks its correlation id, others flow; redrive delivers in order; discard releases the rest', async () => {
    const c = await consumerWith({ maxReceives: 1 });
    const d = `dead-${randomUUID()}`;
    const e = `flow-${randomUUID()}`;
    const d1 = await publish(d);
    const d2 = await publish(d);
    const e1 = await publish(e);
    for (const id of [d1, d2, e1]) await enqueued(id, c);

    // d1 received once (its threshold), then nacked: it is dead-lettered instead of handed out again.
    const first = await c.client.receive({ maxMessages: 10, waitSeconds: 0 });
    expect(ids(first)).toEqual([d1, d2, e1]);
    await c.client.nack([first[0]!.receipt_handle]);
    await c.client.ack([first[2]!.receipt_handle]);
    const e2 = await publish(e);
    await enqueued(e2, c);
    const next = await c.client.receive({ maxMessages: 10, waitSeconds: 2 });
    expect(ids(next)).toEqual([e2]); // e flows; d2 waits behind its dead-lettered head
    await c.client.ack([next[0]!.receipt_handle]);
    expect(await c.client.receive({ maxMessages: 10, waitSeconds: 1 })).toEqual([]);

    expect(await traceOf(d1, c.clientId)).toMatchObject({ state: 'dead_lettered', receive_count: 1, dead_letter: { resolution: null } });
    expect(await traceOf(d2, c.clientId)).toMatchObject({ state: 'queued', receive_count: 1 });
    const stats = await admin('GET', `/api/admin/connections/${c.clientId}/queue`);
    expect(stats.body).toMatchObject({ depth: 2, dead_letters: 1 });
    const listed = await admin('GET', `/api/admin/connections/${c.clientId}/dead-letters`);
    const letters = (listed.body as { dead_letters: Array<{ id: string; message_id: string; correlation_id: string; receive_count: number }> }).dead_letters;
    expect(letters).toEqual([expect.objectContaining({ message_id: d1, correlation_id: d, receive_count: 1 })]);

    // Redrive: d1 is its correlation id's first again (its receive count back to 0). d2 had its one
    // receive already, so it is not handed out with it: it is dead-lettered next, and f1 waits behind it.
    const redriven = await admin('POST', `/api/admin/connections/${c.clientId}/dead-letters/${letters[0]!.id}/redrive`);
    expect(redriven.body).toMatchObject({ message_id: d1, resolution: 'redriven' });
    expect((await admin('POST', `/api/admin/connections/${c.clientId}/dead-letters/${letters[0]!.id}/redrive`)).status).toBe(404);
    const after = await c.client.receive({ maxMessages: 10, waitSeconds: 2 });
    expect(ids(after)).toEqual([d1]);
    expect(after[0]!.receive_count).toBe(1);
    await c.client.ack([after[0]!.receipt_handle]);
    const f1 = await publish(d);
    await enqueued(f1, c);
    expect(await c.client.receive({ maxMessages: 10, waitSeconds: 1 })).toEqual([]);
    const open = (await admin('GET', `/api/admin/connections/${c.clientId}/dead-letters`)).body as { dead_letters: Array<{ id: string; message_id: string }> };
    expect(ids(open.dead_letters)).toEqual([d2]);
    expect((await admin('POST', `/api/admin/connections/${c.clientId}/dead-letters/${open.dead_letters[0]!.id}/discard`)).body).toMatchObject({
      message_id: d2,
      resolution: 'discarded',
    });
    const rest = await c.client.receive({ maxMessages: 10, waitSeconds: 2 });
    expect(ids(rest)).toEqual([f1]);
    await c.client.ack([rest[0]!.receipt_handle]);
    expect(await traceOf(d2, c.clientId)).toMatchObject({ state: 'discarded', dead_letter: { resolution: 'discarded' } });
    expect((await admin('GET', `/api/admin/connections/${c.clientId}/queue`)).body).toMatchObject({ depth: 0, dead_letters: 0 });
    // An id past Postgres' bigint names no dead letter: 404, never a 503 (found by the fuzz tier).
    for (const action of ['discard', 'redrive']) {
      expect((await admin('POST', `/api/admin/connections/${c.clientId}/dead-letters/9684948080111671057/${action}`)).status).toBe(404);
    }
  }, 90_000);
});

describe('purge (admin API)', () => {
  it('removes what waits and what is in flight, keeps the dead letter, stales the handles, and what comes after flows; audited; 409 producer, 404 unknown', async () => {
    const c = await consumerWith({ maxReceives: 1 });
    const d = `purge-dead-${randomUUID()}`;
    const w = `purge-wait-${randomUUID()}`;
    const d1 = await publish(d);
    await enqueued(d1, c);
    const first = await c.client.receive({ maxMessages: 10, waitSeconds: 0 });
    expect(ids(first)).toEqual([d1]);
    await c.client.nack([first[0]!.receipt_handle]);
    // Received once (its threshold) and nacked: the next receive dead-letters it instead of handing it out.
    expect(await c.client.receive({ maxMessages: 10, waitSeconds: 0 })).toEqual([]);
    expect(await traceOf(d1, c.clientId)).toMatchObject({ state: 'dead_lettered' });
    const d2 = await publish(d);
    const w1 = await publish(w);
    const w2 = await publish(w);
    for (const id of [d2, w1, w2]) await enqueued(id, c);
    const leased = await c.client.receive({ maxMessages: 1, waitSeconds: 0 });
    expect(ids(leased)).toEqual([w1]);
    expect((await admin('GET', `/api/admin/connections/${c.clientId}/queue`)).body).toMatchObject({ depth: 4, in_flight: 1, dead_letters: 1 });

    const purged = await admin('POST', `/api/admin/connections/${c.clientId}/purge`);
    expect([purged.status, purged.body]).toEqual([200, { purged: 3 }]);
    expect((await admin('GET', `/api/admin/connections/${c.clientId}/queue`)).body).toMatchObject({ depth: 1, in_flight: 0, dead_letters: 1 });
    const letters = (await admin('GET', `/api/admin/connections/${c.clientId}/dead-letters`)).body as { dead_letters: Array<{ message_id: string }> };
    expect(ids(letters.dead_letters)).toEqual([d1]);
    // The purged lease's handle answers as a stale one does.
    const ack = await bearerCall(
      bus,
      'POST',
      `/v1/tenants/${house.workspaceId}/consumers/${c.clientId}/ack`,
      c.token,
      JSON.stringify({ receipt_handles: [leased[0]!.receipt_handle] }),
    );
    expect(ack.status).toBe(200);
    expect(JSON.stringify(ack.body)).toContain('receipt_handle.stale');
    // The trace says purged, not acked: the consumer never acked them.
    for (const id of [w1, w2, d2]) expect(await traceOf(id, c.clientId)).toMatchObject({ state: 'purged' });
    expect(await traceOf(d1, c.clientId)).toMatchObject({ state: 'dead_lettered' });

    // Published afterwards: the purged story flows again, in order.
    const w3 = await publish(w);
    const w4 = await publish(w);
    for (const id of [w3, w4]) await enqueued(id, c);
    const after = await c.client.receive({ maxMessages: 10, waitSeconds: 2 });
    expect(ids(after)).toEqual([w3, w4]);
    await c.client.ack(after.map((m) => m.receipt_handle));
    expect(await traceOf(w3, c.clientId)).toMatchObject({ state: 'acked' });

    const audited = await eventually(
      () =>
        withClient(
          bus.env.DATABASE_URL!,
          async (client) =>
            (
              await client.query<{ action: string; status: number; organisation_id: string | null }>(
                'select action, status, organisation_id from audit_log where target = $1',
                [`/api/admin/connections/${c.clientId}/purge`],
              )
            ).rows,
        ),
      (rows) => rows.length === 1,
      { what: 'the audit entry of the purge' },
    );
    expect(audited).toEqual([{ action: `POST /api/admin/connections/${c.clientId}/purge`, status: 200, organisation_id: house.organisationId }]);

    expect((await admin('POST', `/api/admin/connections/${house.producer.clientId}/purge`)).status).toBe(409);
    expect((await admin('POST', `/api/admin/connections/caaaaaaaaaaaa/purge`)).status).toBe(404);
  }, 90_000);
});
