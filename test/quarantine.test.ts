import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { createDatabase, type Knex } from '@bus/db';
import { createKafka, createProducer, encodeMessageHeaders, MESSAGES_TOPIC, messageKey, type Producer } from '@bus/kafka';
import { openapi, som } from '@bus/schemas';
import { contentHash } from '@bus/som';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';

/**
 * Invariant F end to end on the compiled all-in-one: what delivery quarantined is visible to
 * the operator and redrivable through the admin API, never enqueued while invariant A refuses it; and
 * a stored message the pull API cannot render still reaches its consumer. Records are produced
 * straight to the topic and acceptances written straight to Postgres to stage what faults produce (an
 * acceptance committing after delivery stopped waiting) and what an older gateway stored. Every answer
 * is checked against its OpenAPI document.
 */

const adminApi = createOpenApiChecker(openapi.admin);
const SYSTEM_ID = 'storyteller.web';

let bus: RunningBus;
let db: Knex;
let producer: Producer;
let operatorAuth: string;
let tenant: { workspaceId: string; producerId: string; consumerId: string; producerToken: string; consumerToken: string };

interface QuarantinedRecord {
  id: string;
  workspace_id: string | null;
  message_id: string | null;
  reason: string;
  size_bytes: number | null;
}
interface Received {
  receipt_handle: string;
  message_id: string;
  envelope: Record<string, unknown> | null;
  envelope_error?: string;
  body_base64?: string;
}

beforeAll(async () => {
  // A short acceptance wait, so a record without its acceptance is quarantined within a second; no
  // automatic re-check, so what stays quarantined is the operator's to redrive (the re-check is
  // services/delivery's delivery.int.test.ts).
  bus = await startBus({ DELIVERY_ACCEPTANCE_WAIT: '1s', DELIVERY_QUARANTINE_RECHECK: '0s' });
  operatorAuth = `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`;
  db = createDatabase({ url: bus.env.DATABASE_URL as string, poolMax: 2, applicationName: 'test-quarantine' });
  producer = createProducer(
    createKafka({ brokers: (bus.env.KAFKA_BROKERS as string).split(','), clientId: 'test-quarantine', logger: pino({ level: 'warn' }) }),
  );
  await producer.connect();
  await deliveryCaughtUp(bus);
  tenant = await house();
}, 180_000);
afterAll(async () => {
  await producer?.disconnect();
  await db?.destroy();
  await bus?.stop();
}, 30_000);

/** Calls the admin API as the operator (or with `auth`) and checks the answer against admin.json. */
async function admin(method: string, path: string, body?: unknown, auth: string | null = operatorAuth) {
  const response = await fetchObserved(`${bus.portalUrl}${path}`, {
    method,
    headers: { ...(auth === null ? {} : { Authorization: auth }), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  adminApi.check(method, path, response);
  return response;
}

async function created<T>(path: string, body: unknown): Promise<T> {
  const res = await admin('POST', path, body);
  expect(res.status).toBe(201);
  return res.body as T;
}

async function token(clientId: string, clientSecret: string): Promise<string> {
  const res = await fetchObserved(`${bus.busUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return (res.body as { access_token: string }).access_token;
}

/** A house made through the admin API, with a producer allowed telling.started and one consumer. */
async function house() {
  const organisation = await created<{ id: string }>('/api/admin/organisations', { name: 'House', kind: 'house', quota: { tier: 'high' } });
  const workspace = await created<{ id: string }>('/api/admin/workspaces', { organisation_id: organisation.id, name: 'Stories' });
  const app = await created<{ id: string }>('/api/admin/apps', { workspace_id: workspace.id, name: 'Studio' });
  expect((await admin('PUT', `/api/admin/apps/${app.id}/permissions`, { system_ids: [SYSTEM_ID], message_types: ['telling.started'] })).status).toBe(200);
  type Issued = { client_id: string; client_secret: string };
  const producerConnection = await created<Issued>('/api/admin/connections', { app_id: app.id, kind: 'producer' });
  const consumerConnection = await created<Issued>('/api/admin/connections', { app_id: app.id, kind: 'consumer' });
  return {
    workspaceId: workspace.id,
    producerId: producerConnection.client_id,
    consumerId: consumerConnection.client_id,
    producerToken: await token(producerConnection.client_id, producerConnection.client_secret),
    consumerToken: await token(consumerConnection.client_id, consumerConnection.client_secret),
  };
}

type Message = Record<string, unknown> & { message_id: string; correlation_id: string };
function started(): Message {
  return {
    ...(som.examples['telling.started'] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: `c-${randomUUID()}`,
    occurred_at: new Date().toISOString(),
  };
}

/** A record as the gateway produces it for `message` (the header hash is the message's), with `value` as given. */
async function produce(message: Message, value: Buffer): Promise<void> {
  await producer.send({
    topic: MESSAGES_TOPIC,
    messages: [
      {
        key: messageKey(tenant.workspaceId, message.correlation_id),
        value,
        headers: encodeMessageHeaders({
          workspace_id: tenant.workspaceId,
          message_id: message.message_id,
          message_type: 'telling.started',
          family: 'telling',
          producer_connection_id: tenant.producerId,
          content_hash: contentHash(message),
          accepted_at: new Date().toISOString(),
          traceparent: null,
        }),
      },
    ],
  });
}

/** The gateway's acceptance row for `message`, committed now (a commit that landed late). */
async function commitAcceptance(message: Message): Promise<void> {
  await db('accepted_messages').insert({
    workspace_id: tenant.workspaceId,
    message_id: message.message_id,
    content_hash: contentHash(message),
    message_type: 'telling.started',
    correlation_id: message.correlation_id,
    producer_connection_id: tenant.producerId,
    accepted_at: new Date(),
    kafka_partition: 0,
    kafka_offset: 0,
  });
}

async function listed(query: string): Promise<{ records: QuarantinedRecord[]; next_after: string | null }> {
  const res = await admin('GET', `/api/admin/quarantine?${query}`);
  expect(res.status).toBe(200);
  return res.body as { records: QuarantinedRecord[]; next_after: string | null };
}

/** The quarantined record of `messageId`, once delivery has quarantined it. */
async function quarantinedRecordOf(messageId: string): Promise<QuarantinedRecord> {
  const page = await eventually(
    () => listed(`workspace_id=${tenant.workspaceId}`),
    (p) => p.records.some((r) => r.message_id === messageId),
    { timeoutMs: 60_000, what: `message ${messageId} in quarantine` },
  );
  return page.records.find((r) => r.message_id === messageId)!;
}

const consumerPath = (route: string) => `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumerId}/${route}`;
async function receive(): Promise<Received[]> {
  const res = await bearerCall(bus, 'GET', `${consumerPath('messages')}?wait_seconds=10`, tenant.consumerToken);
  expect(res.status).toBe(200);
  return (res.body as { messages: Received[] }).messages;
}
async function ack(messages: Received[]): Promise<void> {
  const res = await bearerCall(bus, 'POST', consumerPath('ack'), tenant.consumerToken, { receipt_handles: messages.map((m) => m.receipt_handle) });
  expect((res.body as { results: Array<{ status: string }> }).results.every((r) => r.status === 'done')).toBe(true);
}
const deliveriesOf = (messageId: string) => db('deliveries').where({ message_id: messageId }).pluck('consumer_id');

describe('delivery quarantine, seen and redriven by the operator', () => {
  it('redrives a record quarantined as acceptance.missing once its acceptance committed, and the consumer receives it', async () => {
    const message = started();
    const raw = Buffer.from(JSON.stringify(message, null, 2));
    await produce(message, raw);
    const record = await quarantinedRecordOf(message.message_id);
    expect(record).toMatchObject({ workspace_id: tenant.workspaceId, reason: 'acceptance.missing', size_bytes: raw.length });
    expect(JSON.stringify(record)).not.toContain(message.correlation_id); // metadata only, never the value

    // Asked before the acceptance exists, the redrive refuses and nothing is enqueued.
    const early = await admin('POST', '/api/admin/quarantine/redrive', { ids: [record.id] });
    expect(early.body).toEqual({
      results: [{ id: record.id, outcome: 'refused', workspace_id: tenant.workspaceId, message_id: message.message_id, reason: 'acceptance.missing' }],
      next_after: null,
    });
    expect(await deliveriesOf(message.message_id)).toEqual([]);

    await commitAcceptance(message);
    const redriven = await admin('POST', '/api/admin/quarantine/redrive', { ids: [record.id] });
    expect(redriven.status).toBe(200);
    expect(redriven.body).toEqual({
      results: [{ id: record.id, outcome: 'redriven', workspace_id: tenant.workspaceId, message_id: message.message_id, deliveries: 1 }],
      next_after: null,
    });
    expect((await listed(`workspace_id=${tenant.workspaceId}`)).records.map((r) => r.id)).not.toContain(record.id);

    const [got, ...rest] = await receive();
    expect(rest).toEqual([]);
    expect(got).toMatchObject({ message_id: message.message_id, envelope: message });
    await ack([got!]);

    const again = await admin('POST', '/api/admin/quarantine/redrive', { ids: [record.id] });
    expect(again.body).toEqual({ results: [{ id: record.id, outcome: 'not_found' }], next_after: null });
    const metrics = await fetch(`${bus.busUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/bus_quarantine_redrives_total\{outcome="redriven"\} 1/);
  }, 90_000);

  it('refuses to redrive a record whose bytes differ from what was accepted, and it stays quarantined', async () => {
    const message = started();
    await commitAcceptance(message);
    await produce(message, Buffer.from(JSON.stringify({ ...message, payload: { ...(message.payload as object), altered: true } })));
    const record = await quarantinedRecordOf(message.message_id);
    expect(record.reason).toBe('acceptance.hash_mismatch');

    const byWorkspace = await admin('POST', '/api/admin/quarantine/redrive', { workspace_id: tenant.workspaceId });
    expect(byWorkspace.status).toBe(200);
    const answer = byWorkspace.body as { results: Array<{ id: string; outcome: string; reason?: string }>; next_after: string | null };
    expect(answer.results.find((r) => r.id === record.id)).toEqual({
      id: record.id,
      outcome: 'refused',
      workspace_id: tenant.workspaceId,
      message_id: message.message_id,
      reason: 'acceptance.hash_mismatch',
    });
    expect(answer.next_after).toBeNull();
    expect(await deliveriesOf(message.message_id)).toEqual([]);
    const stays = await listed(`workspace_id=${tenant.workspaceId}&reason=acceptance.hash_mismatch`);
    expect(stays.records.map((r) => r.id)).toEqual([record.id]);
  }, 90_000);

  it('refuses malformed list and redrive requests with 400, and anyone without the operator credentials with 401', async () => {
    for (const query of ['reason=acceptance.late', 'limit=0', 'limit=101', 'after=abc', 'workspace_id=nope', 'colour=red']) {
      const res = await admin('GET', `/api/admin/quarantine?${query}`);
      expect([query, res.status, (res.body as { code: string }).code]).toEqual([query, 400, 'admin.request_invalid']);
    }
    for (const body of [
      {},
      { ids: [] },
      { ids: ['1', '1'] },
      { ids: ['x'] },
      { ids: ['1'], workspace_id: tenant.workspaceId },
      { ids: ['1'], after: '1' },
      { workspace_id: tenant.workspaceId, after: '-1' },
    ]) {
      const res = await admin('POST', '/api/admin/quarantine/redrive', body);
      expect([body, res.status, (res.body as { code: string }).code]).toEqual([body, 400, 'admin.request_invalid']);
    }
    expect((await admin('GET', '/api/admin/quarantine', undefined, null)).status).toBe(401);
    expect((await admin('POST', '/api/admin/quarantine/redrive', { ids: ['1'] }, null)).status).toBe(401);
  });
});

describe('a stored message the pull API cannot render', () => {
  it('reaches its consumer with its exact bytes (a BOM before the JSON, as older gateways stored it) and acks', async () => {
    const message = started();
    const published = await bearerCall(bus, 'POST', `/v1/tenants/${tenant.workspaceId}/messages`, tenant.producerToken, message);
    expect(published.status).toBe(202);
    await eventually(
      () => deliveriesOf(message.message_id),
      (rows) => rows.length === 1,
      { what: 'the delivery of the published message' },
    );
    // The stored row as a gateway that accepted a BOM left it.
    await db.raw(`UPDATE messages SET body = '\\xefbbbf'::bytea || body WHERE workspace_id = ? AND message_id = ?`, [tenant.workspaceId, message.message_id]);
    const [stored] = await db('messages').where({ message_id: message.message_id }).pluck('body');

    const [got, ...rest] = await receive();
    expect(rest).toEqual([]);
    expect(got).toMatchObject({ message_id: message.message_id, envelope: null, envelope_error: 'json.invalid' });
    expect(Buffer.compare(Buffer.from(got!.body_base64!, 'base64'), stored as Buffer)).toBe(0);
    await ack([got!]);
    const metrics = await fetch(`${bus.busUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/bus_pull_unrenderable_total\{reason="json.invalid"\} 1/);
    expect(bus.process.output()).not.toContain((stored as Buffer).toString('base64'));
  }, 60_000);
});
