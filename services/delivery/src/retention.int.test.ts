import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Registry } from 'prom-client';
import { useTestDatabase } from '@bus/fixtures';
import { oldestRowAt, SWEEP_LOCK, sweepStatements, type Knex } from '@bus/db';
import { lockStories, RETENTION_TABLES, type RetentionSettings } from '@bus/queue';
import { KnexPublishStore } from '@bus/gateway';
import { createRetentionSweeper } from './retention';

const logger = pino({ level: 'silent' });
const DAY = 86_400_000;
const HOUR = 3_600_000;
const workspaceId = 'wretentiontst';
const consumerId = 'cretentioncn2';
const settings: RetentionSettings = {
  // The audit log's window here is 30 days (its floor in production is 90) so that the 31-day-old rows
  // below are past every window and the six-day-old ones inside every window, as for the other tables.
  windows: {
    IDEMPOTENCY_RETENTION: 7 * DAY,
    QUEUE_RETENTION: 14 * DAY,
    QUARANTINE_RETENTION: 7 * DAY,
    REPLAY_JOB_RETENTION: 30 * DAY,
    REFUSAL_RETENTION: 7 * DAY,
    AUDIT_RETENTION: 30 * DAY,
    PORTAL_SESSION_RETENTION: 7 * DAY,
  },
  intervalMs: 60_000,
  batchSize: 10,
};

const database = useTestDatabase({ applicationName: 'retention-test', poolMax: 10 });
let db: Knex;
/** The sweeper's clock: tests move it. */
let clock = Date.parse('2026-03-01T12:00:00Z');
const now = () => new Date(clock);

beforeAll(async () => {
  db = database.db;
  await database.tenancy.tenant({ workspaceId, connections: [{ id: consumerId, kind: 'consumer' }] });
}, 60_000);

beforeEach(async () => {
  for (const entry of RETENTION_TABLES) await db(entry.table).delete();
});

const ago = (ms: number) => new Date(clock - ms);
const count = async (table: string) => Number(((await db(table).count('* as n')) as Array<{ n: string }>)[0]!.n);

/** The stored message `messageId` of story `correlationId`, stored at `at`. */
async function storeMessage(messageId: string, correlationId: string, at: Date, kafkaOffset: number): Promise<void> {
  await db('messages').insert({
    workspace_id: workspaceId,
    message_id: messageId,
    body: Buffer.from('{}'),
    message_type: 'telling.started',
    correlation_id: correlationId,
    published_at: at,
    kafka_partition: 0,
    kafka_offset: kafkaOffset,
    stored_at: at,
  });
}

/** One row of each table, aged `age` on the sweeper's clock. */
async function rowsAged(age: number, n: number): Promise<void> {
  const at = ago(age);
  for (let i = 0; i < n; i++) {
    const messageId = randomUUID();
    const correlationId = `c-${randomUUID()}`;
    await db('accepted_messages').insert({
      workspace_id: workspaceId,
      message_id: messageId,
      content_hash: 'a'.repeat(64),
      message_type: 'telling.started',
      correlation_id: correlationId,
      producer_connection_id: 'cproducerprd2',
      accepted_at: at,
      kafka_partition: 0,
      kafka_offset: i,
    });
    await db('story_state').insert({ workspace_id: workspaceId, correlation_id: correlationId, state: '{}', updated_at: at });
    await storeMessage(messageId, correlationId, at, i);
    const [delivery] = await db('deliveries')
      .insert({ consumer_id: consumerId, workspace_id: workspaceId, message_id: messageId, correlation_id: correlationId, enqueued_at: at })
      .returning('id');
    await db('consumer_fault_events').insert({ consumer_id: consumerId, delivery_id: delivery!.id, message_id: messageId, kind: 'duplicate', injected_at: at });
    await db('dead_letters').insert({
      consumer_id: consumerId,
      delivery_id: delivery!.id,
      message_id: messageId,
      correlation_id: correlationId,
      receive_count: 3,
      dead_lettered_at: at,
    });
    await db('quarantined_records').insert({
      topic: 't',
      kafka_partition: 0,
      kafka_offset: `${clock - age}${i}`,
      reason: 'acceptance.missing',
      headers: '{}',
      quarantined_at: at,
    });
    await db('refusals').insert({
      workspace_id: workspaceId,
      connection_id: consumerId,
      mode: 'publish',
      message_id: messageId,
      status: 409,
      violations: '[]',
      refused_at: at,
    });
    // An ended run: stopped at `at`, with a validate accepted at its end.
    const runId = randomUUID();
    await db('test_runs').insert({
      id: runId,
      workspace_id: workspaceId,
      label: 'run',
      opened_by: consumerId,
      started_at: new Date(at.getTime() - 60_000),
      ends_at: at,
      stopped_at: at,
    });
    await db('run_validations').insert({ run_id: runId, connection_id: consumerId, message_id: messageId, validated_at: at });
    await db('audit_log').insert({
      at,
      actor_kind: 'operator_basic',
      actor: 'operator',
      action: 'connection.create',
      target: consumerId,
      source_address: '127.0.0.1',
      status: 201,
    });
    await db('portal_sessions').insert({
      id_hash: randomUUID(),
      subject: 'sub',
      name: 'A Person',
      grants: '[]',
      csrf_token: 'csrf',
      created_at: at,
      last_seen_at: at,
      expires_at: at,
    });
    await db('portal_logins').insert({ state_hash: randomUUID(), code_verifier: 'verifier', nonce: 'nonce', created_at: at });
    await db('replay_jobs').insert({
      id: `p${randomUUID()
        .replace(/[^a-z2-7]/g, '')
        .padEnd(12, 'a')
        .slice(0, 12)}`,
      consumer_id: consumerId,
      since: at,
      status: 'succeeded',
      requested_at: at,
      heartbeat_at: at,
      finished_at: at,
    });
  }
}

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const entry of RETENTION_TABLES) out[entry.table] = await count(entry.table);
  return out;
}

function metricValues(metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>, name: string): Record<string, number> {
  const metric = metrics.find((m) => m.name === name);
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels.table), v.value]));
}

describe('the retention sweep on the real Postgres, with a controlled clock', () => {
  it('shrinks every table to its window, in batches, and shows removed rows, windows and oldest ages in /metrics', async () => {
    // 25 rows of each table 31 days old (past every window), 25 six days old (inside every window).
    await rowsAged(31 * DAY, 25);
    await rowsAged(6 * DAY, 25);
    const registry = new Registry();
    const sweeper = createRetentionSweeper({ db, metrics: registry, logger, settings, now });

    const first = await sweeper.sweep();
    expect(first.yielded).toBe(false);
    // Batches of 10: 10 + 10 + 5 for each table.
    for (const entry of RETENTION_TABLES) expect(first.tables[entry.table]).toEqual({ removed: 25, batches: 3 });
    expect(await counts()).toEqual(Object.fromEntries(RETENTION_TABLES.map((e) => [e.table, 25])));

    const metrics = await registry.getMetricsAsJSON();
    expect(metricValues(metrics, 'bus_retention_rows_removed_total')).toEqual(Object.fromEntries(RETENTION_TABLES.map((e) => [e.table, 25])));
    expect(metricValues(metrics, 'bus_retention_window_seconds')).toEqual({
      accepted_messages: 7 * 86_400,
      story_state: 7 * 86_400,
      deliveries: 14 * 86_400,
      messages: 14 * 86_400,
      quarantined_records: 7 * 86_400,
      replay_jobs: 30 * 86_400,
      refusals: 7 * 86_400,
      test_runs: 7 * 86_400,
      run_validations: 7 * 86_400,
      consumer_fault_events: 14 * 86_400,
      dead_letters: 14 * 86_400,
      audit_log: 30 * 86_400,
      portal_sessions: 7 * 86_400,
      portal_logins: 7 * 86_400,
    });
    const ages = metricValues(metrics, 'bus_retention_oldest_row_age_seconds');
    // The age counts rows nothing keeps: each remaining message has its delivery, each story state a
    // message inside the window, so those two have none (0).
    expect(ages).toEqual({ ...Object.fromEntries(RETENTION_TABLES.map((e) => [e.table, 6 * 86_400])), messages: 0, story_state: 0 });
    expect(await registry.getSingleMetricAsString('bus_retention_sweep_duration_seconds')).toMatch(
      /bus_retention_sweep_duration_seconds_count\{table="story_state"\} 1/,
    );

    // Two days on: the six-day-old rows are eight days old, past the 7-day windows only.
    clock += 2 * DAY;
    const second = await sweeper.sweep();
    expect(second.tables).toMatchObject({
      accepted_messages: { removed: 25 },
      story_state: { removed: 25 },
      quarantined_records: { removed: 25 },
      refusals: { removed: 25 },
      run_validations: { removed: 25 },
      test_runs: { removed: 25 },
      deliveries: { removed: 0 },
      replay_jobs: { removed: 0 },
    });
    expect(await counts()).toEqual({
      accepted_messages: 0,
      story_state: 0,
      deliveries: 25,
      messages: 25,
      quarantined_records: 0,
      replay_jobs: 25,
      refusals: 0,
      run_validations: 0,
      test_runs: 0,
      consumer_fault_events: 25,
      dead_letters: 25,
      audit_log: 25,
      portal_sessions: 0,
      portal_logins: 0,
    });
  });

  it('keeps a story state while any message of its correlation id is inside the window, however old the state', async () => {
    const correlationId = `c-${randomUUID()}`;
    await db('story_state').insert({ workspace_id: workspaceId, correlation_id: correlationId, state: '{}', updated_at: ago(20 * DAY) });
    await db('accepted_messages').insert({
      workspace_id: workspaceId,
      message_id: randomUUID(),
      content_hash: 'b'.repeat(64),
      message_type: 'story.context',
      correlation_id: correlationId,
      producer_connection_id: 'cproducerprd2',
      accepted_at: ago(7 * DAY - HOUR),
      kafka_partition: 0,
      kafka_offset: 1,
    });
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    expect((await sweeper.sweep()).tables.story_state).toEqual({ removed: 0, batches: 0 });
    clock += 2 * HOUR;
    expect((await sweeper.sweep()).tables).toMatchObject({ accepted_messages: { removed: 1 }, story_state: { removed: 1 } });
  });

  it('keeps a replay job that is still running, whenever it started', async () => {
    await db('replay_jobs').insert({
      id: 'prunningjob22',
      consumer_id: consumerId,
      since: ago(60 * DAY),
      status: 'running',
      requested_at: ago(40 * DAY),
      heartbeat_at: ago(5_000),
    });
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    expect((await sweeper.sweep()).tables.replay_jobs).toEqual({ removed: 0, batches: 0 });
  });

  it('never waits for a publish holding a story’s lock: it leaves that story to the next sweep', async () => {
    const correlationId = `c-${randomUUID()}`;
    await db('story_state').insert({ workspace_id: workspaceId, correlation_id: correlationId, state: '{}', updated_at: ago(8 * DAY) });
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    // The gateway's own transaction (publish-store withStoryLocks), held open as a slow publish would.
    const publishing = KnexPublishStore.create(db).withStoryLocks({ stories: [{ workspaceId, correlationId }], lockTimeoutMs: 30_000 }, async () => {
      locked();
      await held;
    });
    await lockTaken;
    expect((await sweeper.sweep()).tables.story_state).toEqual({ removed: 0, batches: 0 });
    release();
    await publishing;
    expect((await sweeper.sweep()).tables.story_state).toEqual({ removed: 1, batches: 1 });
  });

  it('leaves a stored message to the next sweep while an enqueue holds its story, and keeps it if the enqueue gave it a delivery', async () => {
    const correlationId = `c-${randomUUID()}`;
    const messageId = randomUUID();
    await storeMessage(messageId, correlationId, ago(15 * DAY), 200);
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    // A Kafka redelivery of the message, enqueued as delivery-store does: the story's lock, then the
    // delivery of a message already stored.
    await db.transaction(async (trx) => {
      await lockStories(trx, [{ workspaceId, correlationId }]);
      expect((await sweeper.sweep()).tables.messages).toEqual({ removed: 0, batches: 0 });
      await trx('deliveries').insert({
        consumer_id: consumerId,
        workspace_id: workspaceId,
        message_id: messageId,
        correlation_id: correlationId,
        is_head: true,
      });
    });
    expect((await sweeper.sweep()).tables.messages).toEqual({ removed: 0, batches: 0 });
    expect(await db('messages').where({ message_id: messageId }).first('message_id')).toEqual({ message_id: messageId });
    // Once its delivery is past the window too, the message goes with it.
    await db('deliveries')
      .where({ message_id: messageId })
      .update({ enqueued_at: ago(15 * DAY) });
    const swept = (await sweeper.sweep()).tables;
    expect([swept.deliveries?.removed, swept.messages?.removed]).toEqual([1, 1]);
  });

  it("counts a stored message's age only past its window: the oldest there that no delivery keeps", async () => {
    const entry = RETENTION_TABLES.find((e) => e.table === 'messages')!;
    const cutoff = ago(14 * DAY);
    const message = async (age: number, delivered: boolean) => {
      const messageId = randomUUID();
      const correlationId = `c-${randomUUID()}`;
      await storeMessage(messageId, correlationId, ago(age), 300);
      if (delivered)
        await db('deliveries').insert({ consumer_id: consumerId, workspace_id: workspaceId, message_id: messageId, correlation_id: correlationId });
      return messageId;
    };
    await message(20 * DAY, true);
    const due = await message(16 * DAY, false);
    await message(3 * DAY, false);
    expect(await oldestRowAt(db, entry, cutoff)).toEqual(ago(16 * DAY));
    await db('messages').where({ message_id: due }).delete();
    // The 20-day-old message is kept by its delivery; the 3-day-old one is inside its window.
    expect(await oldestRowAt(db, entry, cutoff)).toBeNull();
  });

  it("makes the next un-acked delivery its story's head when it removes an un-acked head past the window", async () => {
    const correlationId = `c-${randomUUID()}`;
    const ids: string[] = [];
    for (const [i, age] of [15 * DAY, 13 * DAY].entries()) {
      const messageId = randomUUID();
      await storeMessage(messageId, correlationId, ago(age), 100 + i);
      const [row] = await db('deliveries')
        .insert({
          consumer_id: consumerId,
          workspace_id: workspaceId,
          message_id: messageId,
          correlation_id: correlationId,
          enqueued_at: ago(age),
          is_head: i === 0,
        })
        .returning('id');
      ids.push(String(row!.id));
    }
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    expect((await sweeper.sweep()).tables.deliveries).toEqual({ removed: 1, batches: 1 });
    expect((await db('deliveries').where({ correlation_id: correlationId }).select('id', 'is_head')).map((r) => [String(r.id), r.is_head])).toEqual([
      [ids[1], true],
    ]);
  });

  it('sweeps on one instance at a time: while another holds the sweep lock, a sweep yields and removes nothing', async () => {
    await rowsAged(31 * DAY, 3);
    const sweeper = createRetentionSweeper({ db, metrics: new Registry(), logger, settings, now });
    await db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [...SWEEP_LOCK]);
      expect(await sweeper.sweep()).toEqual({ tables: {}, yielded: true });
    });
    expect((await sweeper.sweep()).tables.accepted_messages).toEqual({ removed: 3, batches: 1 });
  });

  it('reads each batch from an index, never a table scan', async () => {
    await rowsAged(31 * DAY, 3);
    for (const entry of RETENTION_TABLES) {
      const { pick, remove } = sweepStatements(entry);
      const plans = await db.transaction(async (trx) => {
        // With sequential scans priced out, a plan without one shows an index serves every lookup.
        await trx.raw('SET LOCAL enable_seqscan = off');
        const explain = async (sql: string, bindings: Record<string, unknown>) =>
          ((await trx.raw(`EXPLAIN ${sql}`, bindings)) as { rows: Array<{ 'QUERY PLAN': string }> }).rows.map((r) => r['QUERY PLAN']).join('\n');
        return [await explain(pick, { cutoff: now(), limit: 10 }), await explain(remove, { cutoff: now(), ctids: ['(0,1)'] })];
      });
      for (const plan of plans) expect({ table: entry.table, plan }).toEqual({ table: entry.table, plan: expect.not.stringContaining('Seq Scan') });
    }
  });
});
