import { randomBytes, randomUUID } from 'node:crypto';
import { KafkaJSNonRetriableError } from 'kafkajs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { uncountedActivity, useTestDatabase } from '@bus/fixtures';
import { loadConfig } from '@bus/config';
import { readConnectionWorkspaces, type Knex } from '@bus/db';
import { createGroupCommitter, KnexPublishStore, kafkaCommitter } from '@bus/gateway';
import { createKafka, createProducer, encodeMessageHeaders, ensureTopics, messageKey, type Kafka, type Producer } from '@bus/kafka';
import { KnexDeliveryStore, replayToConsumer, retentionConfig, retentionSettings } from '@bus/queue';
import { som } from '@bus/schemas';
import { bodyDigest, contentHash, type SomMessage } from '@bus/som';
import { eventually, requireEnv, restartOffsets, waitForGroupCaughtUp } from '@bus/testing';
import type { Service } from '@bus/http';
import { createDeliveryService } from './service';
import { registerQueueGauges } from './queue-gauges';
import { createRetentionSweeper } from './retention';

const logger = pino({ level: 'silent' });
const topic = `test.delivery.${randomBytes(4).toString('hex')}`;
const workspaceId = 'wdeliverytst2';
const publisher = { clientId: 'cdeliveryprd2', workspaceId, appId: 'adeliverytst2' };
const consumers = ['cdeliverycna2', 'cdeliverycnb2'];
const revokedConsumer = 'cdeliverycnc2';
/** The default windows (queues 14 days, idempotency = a 30-day archive). */
const retention = retentionSettings({ ...loadConfig(retentionConfig, {}), KAFKA_MESSAGES_RETENTION: 30 * 86_400_000 });

const database = useTestDatabase({ applicationName: 'delivery-test', poolMax: 10 });
let db: Knex;
let kafka: Kafka;
let producer: Producer;
let delivery: Service;
let metrics: Registry;

beforeAll(async () => {
  db = database.db;
  await database.tenancy.tenant({
    workspaceId,
    appId: publisher.appId,
    connections: [
      { id: publisher.clientId, kind: 'producer' },
      ...consumers.map((id) => ({ id, kind: 'consumer' as const })),
      { id: revokedConsumer, kind: 'consumer', status: 'revoked' },
    ],
    permissions: { systemIds: ['storyteller.web'], messageTypes: ['telling.started'] },
  });
  kafka = createKafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'delivery-test', logger });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
  await admin.disconnect();
  producer = createProducer(kafka);
  await producer.connect();
  await startDelivery();
}, 60_000);

async function startDelivery(): Promise<void> {
  metrics = new Registry();
  delivery = createDeliveryService({
    readiness: [],
    db,
    kafka,
    logger,
    metrics,
    activity: uncountedActivity,
    groupId: `${topic}.delivery`,
    acceptanceWaitMs: 500,
    quarantineRecheckMs: 30_000,
    retention,
    topic,
  });
  await delivery.start?.();
}

database.beforeDrop(async () => {
  await delivery?.stop?.();
  await producer?.disconnect();
});

function started(): SomMessage {
  const example = som.examples['telling.started'] as unknown as SomMessage;
  return { ...example, message_id: randomUUID(), correlation_id: `c-${randomUUID()}`, occurred_at: new Date().toISOString() };
}

/**
 * The gateway's commit (publishMessage's step 5, from the gateway's exported store and committer,
 * since publishMessage itself is internal to it): under the correlation lock, Kafka send with
 * acks=all, then the acceptance row, then COMMIT.
 */
async function publish(): Promise<{ messageId: string; raw: Buffer }> {
  const message = started();
  const raw = Buffer.from(JSON.stringify(message, null, 2), 'utf8');
  const committer = createGroupCommitter({
    store: KnexPublishStore.create(db),
    commitToKafka: kafkaCommitter(producer, topic),
    commitTimeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
  });
  const decision = await committer.commit({
    workspaceId,
    producerConnectionId: publisher.clientId,
    message,
    hash: contentHash(message),
    policy: [],
    bytes: raw,
    family: 'telling',
    traceparent: null,
  });
  expect(decision).toEqual({ kind: 'accepted' });
  return { messageId: message.message_id, raw };
}

function acceptanceOf(message: ReturnType<typeof started>, acceptedAt: Date, kafkaPartition: number, kafkaOffset: string) {
  const { message_id: messageId, correlation_id: correlationId } = message;
  return {
    workspaceId,
    messageId,
    contentHash: contentHash(message),
    // The gateway's digest of the bytes it accepted: these tests produce JSON.stringify(message).
    bodySha256: bodyDigest(Buffer.from(JSON.stringify(message))),
    messageType: 'telling.started',
    correlationId,
    producerConnectionId: publisher.clientId,
    acceptedAt,
    kafkaPartition,
    kafkaOffset,
  };
}

/** Records the acceptance of `message` as the gateway does, without its Kafka record: a test then produces its own. */
async function acceptOnly(message: ReturnType<typeof started>): Promise<void> {
  const story = { workspaceId, correlationId: message.correlation_id };
  await KnexPublishStore.create(db).withStoryLocks({ stories: [story], lockTimeoutMs: 5_000 }, (tx) =>
    tx.record([acceptanceOf(message, new Date(), 0, '0')], []),
  );
}

/** A record as the gateway would produce it for `message`, with `value` and `headerHash` as given. */
function directRecord(message: { message_id: string; correlation_id: string }, value: Buffer, headerHash: string) {
  return {
    key: messageKey(workspaceId, message.correlation_id),
    value,
    headers: encodeMessageHeaders({
      workspace_id: workspaceId,
      message_id: message.message_id,
      message_type: 'telling.started',
      family: 'telling',
      producer_connection_id: publisher.clientId,
      content_hash: headerHash,
      accepted_at: new Date().toISOString(),
      traceparent: null,
    }),
  };
}

/** A record produced straight to the topic (not through the gateway), with headers that look right. */
async function produceDirectly(message: { message_id: string; correlation_id: string }, value: Buffer, headerHash: string): Promise<void> {
  await producer.send({ topic, messages: [directRecord(message, value, headerHash)] });
}

const quarantineOf = (messageId: string) =>
  eventually(
    () => db('quarantined_records').where({ message_id: messageId }).pluck('reason'),
    (r) => r.length > 0,
  );

const deliveriesOf = (messageId: string) =>
  db('deliveries').where({ message_id: messageId }).orderBy('consumer_id').select('consumer_id', 'state', 'correlation_id');

describe('delivery on the real Kafka and Postgres', () => {
  it('stores a published message once, with its exact bytes, and one delivery per active consumer', async () => {
    const { messageId, raw } = await publish();
    const rows = await eventually(
      () => deliveriesOf(messageId),
      (r) => r.length >= 2,
    );
    expect(rows.map((r) => r.consumer_id)).toEqual(consumers);
    expect(rows.every((r) => r.state === 'queued')).toBe(true);
    const stored = await db('messages').where({ workspace_id: workspaceId, message_id: messageId }).select('body', 'message_type');
    expect(stored).toHaveLength(1);
    expect(Buffer.compare(stored[0]!.body, raw)).toBe(0);
    expect(stored[0]!.message_type).toBe('telling.started');
  }, 30_000);

  it('never enqueues a Kafka record without an acceptance, and quarantines it with a metric', async () => {
    const forged = started();
    await produceDirectly(forged, Buffer.from(JSON.stringify(forged)), contentHash(forged));
    expect(await quarantineOf(forged.message_id)).toEqual(['acceptance.missing']);
    expect(await deliveriesOf(forged.message_id)).toEqual([]);
    expect(await db('messages').where({ message_id: forged.message_id })).toEqual([]);
    expect(await metrics.getSingleMetricAsString('bus_delivery_quarantined_total')).toMatch(/reason="acceptance.missing"} 1/);
  }, 30_000);

  it('delivers by itself a record whose acceptance committed only after the wait: quarantined as acceptance.missing, then enqueued for every consumer, counted', async () => {
    const late = started();
    await produceDirectly(late, Buffer.from(JSON.stringify(late)), contentHash(late));
    expect(await quarantineOf(late.message_id)).toEqual(['acceptance.missing']);
    expect(await deliveriesOf(late.message_id)).toEqual([]);
    // The gateway's commit lands now, after delivery stopped waiting; nobody redrives it.
    await acceptOnly(late);
    const rows = await eventually(
      () => deliveriesOf(late.message_id),
      (r) => r.length >= 2,
      { what: 'the late record enqueued by the re-check' },
    );
    expect(rows.map((r) => [r.consumer_id, r.state])).toEqual(consumers.map((c) => [c, 'queued']));
    expect(await db('quarantined_records').where({ message_id: late.message_id })).toEqual([]);
    expect(await metrics.getSingleMetricAsString('bus_delivery_quarantine_redriven_total')).toMatch(/^bus_delivery_quarantine_redriven_total 1$/m);
  }, 30_000);

  // The header carries the accepted row's hash, as a forger copying the original record's headers would.
  it.each([
    ['altered bytes', (m: SomMessage) => JSON.stringify({ ...m, payload: { ...m.payload, altered: true } }), 'acceptance.hash_mismatch'],
    ['bytes that are not JSON', (m: SomMessage) => `${JSON.stringify(m)} trailing`, 'value.unreadable'],
  ])(
    'recomputes the hash from the bytes: %s under the accepted hash header are quarantined, never enqueued',
    async (_what, alter, reason) => {
      const original = started();
      await acceptOnly(original);
      await produceDirectly(original, Buffer.from(alter(original)), contentHash(original));
      expect(await quarantineOf(original.message_id)).toEqual([reason]);
      expect(await deliveriesOf(original.message_id)).toEqual([]);
      expect(await db('messages').where({ message_id: original.message_id })).toEqual([]);
      expect(await metrics.getSingleMetricAsString('bus_delivery_quarantined_total')).toMatch(new RegExp(`reason="${reason}"} 1`));
    },
    30_000,
  );

  it('enqueues a record whose acceptance has no digest of its bytes (accepted before migration 016) by its content hash', async () => {
    const original = started();
    await acceptOnly(original);
    await db('accepted_messages').where({ workspace_id: workspaceId, message_id: original.message_id }).update({ body_sha256: null });
    await produceDirectly(original, Buffer.from(JSON.stringify(original)), contentHash(original));
    const rows = await eventually(
      () => deliveriesOf(original.message_id),
      (r) => r.length >= 2,
    );
    expect(rows.map((r) => r.consumer_id)).toEqual(consumers);
  }, 30_000);

  it("enqueues a re-serialised but JSON-equal record (same content, as for the gateway's idempotency) and stores its exact bytes", async () => {
    const original = started();
    await acceptOnly(original);
    // Keys in another order and other whitespace: the same JSON value, other bytes.
    const entries = Object.entries(original).reverse();
    const reserialised = Buffer.from(`{\n${entries.map(([k, v]) => `\t${JSON.stringify(k)} :  ${JSON.stringify(v)}`).join(',\n')}\n}`);
    expect(Buffer.compare(reserialised, Buffer.from(JSON.stringify(original)))).not.toBe(0);
    await produceDirectly(original, reserialised, 'c'.repeat(64));
    expect(
      (
        await eventually(
          () => deliveriesOf(original.message_id),
          (r) => r.length >= 2,
        )
      ).map((r) => r.consumer_id),
    ).toEqual(consumers);
    const [stored] = await db('messages').where({ message_id: original.message_id }).pluck('body');
    expect(Buffer.compare(stored as Buffer, reserialised)).toBe(0);
    expect(await db('quarantined_records').where({ message_id: original.message_id })).toEqual([]);
  }, 30_000);

  it('makes no second copy when Kafka redelivers a record, even after an ack', async () => {
    const { messageId } = await publish();
    await eventually(
      () => deliveriesOf(messageId),
      (r) => r.length >= 2,
    );
    await db('deliveries').where({ message_id: messageId, consumer_id: consumers[0] }).update({ state: 'acked', acked_at: new Date(), is_head: false });
    const accepted = await db('accepted_messages').where({ message_id: messageId }).first();
    // The very record again, as a replay or a redelivery after a crash before the offset commit.
    const [original] = await readRecord(accepted!.kafka_partition, String(accepted!.kafka_offset));
    await producer.send({ topic, messages: [{ key: original!.key, value: original!.value, headers: original!.headers }] });
    // Delivery commits a record's offset only after its transaction: once it has committed past the
    // redelivered record, that record has been handled, and what it did (or did not) do can be checked.
    await waitForGroupCaughtUp(kafka.admin(), `${topic}.delivery`, topic, 20_000);
    const rows = await deliveriesOf(messageId);
    expect(rows.map((r) => [r.consumer_id, r.state])).toEqual([
      [consumers[0], 'acked'],
      [consumers[1], 'queued'],
    ]);
    expect(await db('messages').where({ message_id: messageId })).toHaveLength(1);
    expect(await db('quarantined_records').where({ message_id: messageId })).toEqual([]);
  }, 30_000);

  it('commits every handled offset when it stops, though a second has not passed: a restart replays nothing', async () => {
    // A dozen publishes within a second: a partition's records after its first are left to the
    // once-a-second commit, which the stop must not lose.
    const messageIds: string[] = [];
    for (let i = 0; i < 12; i++) messageIds.push((await publish()).messageId);
    await eventually(
      () => db('deliveries').whereIn('message_id', messageIds),
      (rows) => rows.length === messageIds.length * consumers.length,
      { what: 'the dozen enqueued' },
    );
    await delivery.stop?.();
    const admin = kafka.admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId: `${topic}.delivery`, topics: [topic] });
      const firstRead = restartOffsets(ends, committed?.partitions ?? []);
      expect(firstRead).toEqual(new Map(ends.map((e) => [e.partition, e.offset])));
    } finally {
      await admin.disconnect();
      await startDelivery();
    }
  }, 30_000);
});

async function readRecord(partition: number, offset: string) {
  const { createConsumer } = await import('@bus/kafka');
  const consumer = createConsumer(kafka, { groupId: `${topic}.read.${randomBytes(3).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const found: Array<{ key: Buffer | null; value: Buffer | null; headers: Record<string, string> }> = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition: p, message }) => {
        if (p === partition && message.offset === offset) {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
          found.push({ key: message.key, value: message.value, headers });
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  return found;
}

describe('queue gauges and retention on the real Postgres', () => {
  it('reports depth, in-flight and oldest age per consumer, and the retention sweep drops what is older than 14 days', async () => {
    await db('deliveries').update({ state: 'acked', acked_at: new Date(), is_head: false });
    const fresh = await publish();
    const old = await publish();
    await eventually(
      () => deliveriesOf(old.messageId),
      (r) => r.length >= 2,
    );
    await eventually(
      () => deliveriesOf(fresh.messageId),
      (r) => r.length >= 2,
    );
    const fifteenDaysAgo = new Date(Date.now() - 15 * 86_400_000);
    await db('deliveries').where({ message_id: old.messageId }).update({ enqueued_at: fifteenDaysAgo });
    await db('messages').where({ message_id: old.messageId }).update({ stored_at: fifteenDaysAgo });
    await db('deliveries')
      .where({ message_id: fresh.messageId, consumer_id: consumers[0] })
      .update({ state: 'leased', visible_at: new Date(Date.now() + 60_000) });

    const registry = new Registry();
    registerQueueGauges({ store: KnexDeliveryStore.create(db), workspacesOf: (ids) => readConnectionWorkspaces(db, ids), metrics: registry, logger });
    const sweeper = createRetentionSweeper({ db, metrics: registry, logger, settings: retention });
    const before = await registry.getMetricsAsJSON();
    const value = (metrics: typeof before, name: string, consumer: string) =>
      metrics.find((m) => m.name === name)?.values.find((v) => v.labels.consumer === consumer)?.value;
    expect(value(before, 'bus_queue_depth', consumers[0]!)).toBe(2);
    expect(value(before, 'bus_queue_in_flight', consumers[0]!)).toBe(1);
    expect(value(before, 'bus_queue_in_flight', consumers[1]!)).toBe(0);
    expect(value(before, 'bus_queue_oldest_age_seconds', consumers[1]!)).toBeGreaterThan(14 * 86_400);
    // Each consumer's series names its workspace too, read from its connection.
    const workspaces = await db('connections').whereIn('id', consumers).pluck('workspace_id');
    expect(new Set(before.find((m) => m.name === 'bus_queue_depth')?.values.map((v) => v.labels.workspace))).toEqual(new Set(workspaces));

    const report = await sweeper.sweep();
    expect(report.tables.deliveries).toEqual({ removed: 2, batches: 1 });
    expect(report.tables.messages).toEqual({ removed: 1, batches: 1 });
    expect(await deliveriesOf(old.messageId)).toEqual([]);
    expect(await db('messages').where({ message_id: old.messageId })).toEqual([]);
    expect(await deliveriesOf(fresh.messageId)).toHaveLength(2);
    expect(await registry.getSingleMetricAsString('bus_retention_rows_removed_total')).toMatch(/bus_retention_rows_removed_total\{table="deliveries"\} 2/);
    // The gauges read Postgres at most once a second (a scrape cache): read until the sweep shows.
    const after = await eventually(
      () => registry.getMetricsAsJSON(),
      (m) => value(m, 'bus_queue_depth', consumers[1]!) === 1,
      { what: 'the gauges after the sweep' },
    );
    expect(value(after, 'bus_queue_oldest_age_seconds', consumers[1]!)).toBeLessThan(60);
    await sweeper.stop();
  }, 30_000);
});

describe('replay on the real Kafka and Postgres', () => {
  it('re-enqueues for one consumer every accepted message of its workspace since T, and nothing older', async () => {
    const before = await publish();
    // The replay finds records by their Kafka timestamp, the producer's clock when it built the send:
    // at most this. `since` must lie after it, and the later records' timestamps at or after `since`.
    const beforeSentBy = Date.now();
    await eventually(
      () => deliveriesOf(before.messageId),
      (r) => r.length >= 2,
    );
    const since = await eventually(
      () => new Date(),
      (now) => now.getTime() > beforeSentBy,
      { what: "the clock past the earlier record's timestamp" },
    );
    const after = [await publish(), await publish()];
    for (const m of after)
      await eventually(
        () => deliveriesOf(m.messageId),
        (r) => r.length >= 2,
      );
    await db('deliveries').update({ state: 'acked', acked_at: new Date(), is_head: false });
    // One of them is live again for consumer 0 already (e.g. nacked): the replay leaves it alone.
    await db('deliveries').where({ message_id: after[1]!.messageId, consumer_id: consumers[0] }).update({ state: 'queued', acked_at: null, is_head: true });

    const result = await replayToConsumer({ kafka, store: KnexDeliveryStore.create(db), logger, topic }, { workspaceId, consumerId: consumers[0]!, since });
    expect(result).toMatchObject({ replayed: 1, skipped: 0 });
    expect(result.scanned).toBeGreaterThanOrEqual(2);
    expect((await deliveriesOf(after[0]!.messageId)).map((r) => [r.consumer_id, r.state])).toEqual([
      [consumers[0], 'queued'],
      [consumers[1], 'acked'],
    ]);
    expect((await deliveriesOf(before.messageId)).map((r) => r.state)).toEqual(['acked', 'acked']);
    expect(await db('deliveries').where({ consumer_id: consumers[0] }).whereNot({ state: 'acked' }).pluck('message_id')).toEqual(
      expect.arrayContaining([after[0]!.messageId, after[1]!.messageId]),
    );
  }, 60_000);

  it('ends when its range spans many fetches (over 1 MB of one partition)', async () => {
    // A topic of its own with one partition: 300 records of ~5 KB are well over one fetch's 1 MB per
    // partition, so the replay must move past its first batch (it once fetched that batch forever).
    const bigTopic = `${topic}.big`;
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: bigTopic, numPartitions: 1, replicationFactor: 1 }]);
    await admin.disconnect();
    const since = new Date(Date.now() - 1_000);
    const padding = 'x'.repeat(5_000);
    const records = Array.from({ length: 300 }, () => {
      const message = { ...started(), payload: { ...(started().payload as object), padding } };
      return directRecord(message, Buffer.from(JSON.stringify(message)), 'f'.repeat(64));
    });
    for (let i = 0; i < records.length; i += 50) await producer.send({ topic: bigTopic, messages: records.slice(i, i + 50) });

    const result = await replayToConsumer(
      { kafka, store: KnexDeliveryStore.create(db), logger, topic: bigTopic },
      { workspaceId, consumerId: consumers[0]!, since },
    );
    // Never accepted, so never replayed (invariant A) — but every one of them was read.
    expect(result).toEqual({ scanned: 300, replayed: 0, skipped: 300 });
  }, 60_000);

  it('fails, instead of waiting for ever, when its consumer crashes in a way kafkajs does not restart from', async () => {
    const since = new Date(Date.now() - 1_000);
    const message = started();
    await producer.send({ topic, messages: [directRecord(message, Buffer.from(JSON.stringify(message)), 'f'.repeat(64))] });
    // Postgres answering the acceptance lookup with an error kafkajs treats as final.
    const store = KnexDeliveryStore.create(db);
    const failing = Object.assign(Object.create(store) as KnexDeliveryStore, {
      acceptance: () => Promise.reject(new KafkaJSNonRetriableError('the acceptance lookup failed for good')),
    });
    await expect(replayToConsumer({ kafka, store: failing, logger, topic }, { workspaceId, consumerId: consumers[0]!, since })).rejects.toThrow(
      'the acceptance lookup failed for good',
    );
  }, 60_000);
});
