// Bounded storage end to end: the whole bus runs; this test's own retention sweeper works
// on the bus's database with a controlled clock (the bus's own sweeper is slowed to once a day, so
// only the test decides when rows go), while producers publish and a consumer receives.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadConfig } from '@bus/config';
import { createDatabase, type Knex } from '@bus/db';
import { retentionConfig, retentionSettings } from '@bus/queue';
import { BusConsumer } from '@bus/client';
import { createRetentionSweeper, type RetentionSweeper } from '@bus/delivery';
import { som } from '@bus/schemas';
import { eventually } from '@bus/testing';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { startBus, type RunningBus } from './support/bus';
import { TenantFixture, type Tenant } from './support/tenants';

const DAY = 86_400_000;
const BUS_ENV = { IDEMPOTENCY_RETENTION: '7d', RETENTION_SWEEP_INTERVAL: '1d', RETENTION_SWEEP_BATCH: '20' };

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let producerToken: string;
let consumer: BusConsumer;
let db: Knex;
let sweeper: RetentionSweeper;
/** The test sweeper's clock, as an offset from real time. */
let offsetMs = 0;

beforeAll(async () => {
  bus = await startBus(BUS_ENV);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: Object.keys(som.examples) });
  producerToken = await tenants.token(house.producer);
  consumer = new BusConsumer({ baseUrl: bus.busUrl, ...house.consumer });
  db = createDatabase({ url: bus.env.DATABASE_URL as string, poolMax: 4, applicationName: 'retention-e2e' });
  // The same windows the bus reads from the same variables.
  const settings = retentionSettings({ ...loadConfig(retentionConfig, bus.env), KAFKA_MESSAGES_RETENTION: 30 * DAY });
  sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger: pino({ level: 'silent' }), settings, now: () => new Date(Date.now() + offsetMs) });
}, 120_000);
afterAll(async () => {
  await sweeper?.stop();
  await db?.destroy();
  await tenants?.close();
  await bus?.stop();
});

type Message = Record<string, unknown> & { message_id: string; correlation_id: string };
const started = (): Message => ({
  ...(som.examples['telling.started'] as Message),
  message_id: randomUUID(),
  correlation_id: `c-${randomUUID()}`,
  occurred_at: new Date().toISOString(),
});
const publish = (m: Message) => bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producerToken, m);

/** Receives and acks until every id in `expected` came (more than once is allowed: at least once). */
async function receiveAndAck(expected: ReadonlySet<string>, seen = new Map<string, number>()): Promise<Map<string, number>> {
  const missing = () => [...expected].filter((id) => !seen.has(id));
  await eventually(
    async () => {
      const got = await consumer.receive({ maxMessages: 10, waitSeconds: 2 });
      for (const m of got) seen.set(m.message_id, (seen.get(m.message_id) ?? 0) + 1);
      if (got.length > 0) await consumer.ack(got.map((m) => m.receipt_handle));
      return missing();
    },
    (left) => left.length === 0,
    { timeoutMs: 60_000, what: 'every published message received' },
  );
  return seen;
}

describe('retention while the bus runs', () => {
  it('an idempotent retry inside the window answers 200 duplicate; after it, 202 accepted as new, and a queue still holding the message_id gets no second copy', async () => {
    const message = started();
    expect((await publish(message)).status).toBe(202);
    await receiveAndAck(new Set([message.message_id]));

    // One minute short of the 7-day window: the record stays, the retry is a duplicate.
    offsetMs = 7 * DAY - 60_000;
    await sweeper.sweep();
    const inside = await publish(message);
    expect(inside.status).toBe(200);
    expect(inside.body).toEqual({ accepted: true, duplicate: true, message_id: message.message_id });

    // One minute past it: the sweep removed the record (and the story it was the last message of).
    offsetMs = 7 * DAY + 60_000;
    const report = await sweeper.sweep();
    expect(report.tables.accepted_messages?.removed).toBeGreaterThanOrEqual(1);
    expect(await db('accepted_messages').where({ workspace_id: house.workspaceId, message_id: message.message_id })).toEqual([]);
    const after = await publish(message);
    expect(after.status).toBe(202);
    expect(after.body).toMatchObject({ accepted: true, message_id: message.message_id });
    // Published again, but this consumer's queue still holds its acked delivery of that message_id
    // (queues keep deliveries 14 days, acked ones too): it gets no second copy (docs/gateway.md).
    await deliveryCaughtUp(bus);
    expect(await consumer.receive({ waitSeconds: 0 })).toEqual([]);
    offsetMs = 0;
  }, 120_000);

  it('removes aged rows in batches while a publish/receive stream goes on, losing nothing of the stream', async () => {
    // 60 idempotency records and story states aged 8 days, as if accepted then (past the 7-day window).
    const aged = Array.from({ length: 60 }, () => started());
    const eightDaysAgo = new Date(Date.now() - 8 * DAY);
    await db('accepted_messages').insert(
      aged.map((m, i) => ({
        workspace_id: house.workspaceId,
        message_id: m.message_id,
        content_hash: 'c'.repeat(64),
        message_type: 'telling.started',
        correlation_id: m.correlation_id,
        producer_connection_id: house.producer.clientId,
        accepted_at: eightDaysAgo,
        kafka_partition: 0,
        kafka_offset: i,
      })),
    );
    await db('story_state').insert(
      aged.map((m) => ({ workspace_id: house.workspaceId, correlation_id: m.correlation_id, state: '{}', updated_at: eightDaysAgo })),
    );

    // The stream: 20 messages, each published then received and acked, while the sweeper sweeps
    // over and over (a producer on the minimal tier: 10 a second, bursts of 20).
    const streamed = new Set<string>();
    const seen = new Map<string, number>();
    let streaming = true;
    const sweeps = (async () => {
      const reports = [];
      while (streaming) reports.push(await sweeper.sweep());
      return reports;
    })();
    try {
      for (let i = 0; i < 20; i++) {
        const m = started();
        expect((await publish(m)).status).toBe(202);
        streamed.add(m.message_id);
        await receiveAndAck(new Set([m.message_id]), seen);
      }
    } finally {
      streaming = false;
    }
    const reports = await sweeps;

    expect(reports.length).toBeGreaterThan(1);
    const removed = (table: string) => reports.reduce((n, r) => n + (r.tables[table]?.removed ?? 0), 0);
    const batches = (table: string) => reports.reduce((n, r) => n + (r.tables[table]?.batches ?? 0), 0);
    expect(removed('accepted_messages')).toBe(60);
    expect(removed('story_state')).toBe(60);
    // Batches of RETENTION_SWEEP_BATCH (20) rows.
    expect(batches('accepted_messages')).toBe(3);
    expect(
      await db('accepted_messages').whereIn(
        'message_id',
        aged.map((m) => m.message_id),
      ),
    ).toEqual([]);
    // The stream lost nothing: every message accepted, recorded, and received.
    expect([...streamed].every((id) => seen.has(id))).toBe(true);
    expect(
      await db('accepted_messages')
        .whereIn('message_id', [...streamed])
        .count('* as n'),
    ).toEqual([{ n: '20' }]);
  }, 180_000);

  it('exports each table’s window in /metrics of the process that sweeps', async () => {
    const text = await (await fetch(`${bus.busUrl}/metrics`)).text();
    expect(text).toMatch(/bus_retention_window_seconds\{table="accepted_messages"\} 604800\b/);
    expect(text).toMatch(/bus_retention_window_seconds\{table="deliveries"\} 1209600\b/);
  });
});
