import { createHook } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
// eslint-disable-next-line no-restricted-syntax -- the idle test observes a stretch of idleness, not a condition
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigResourceTypes, KafkaJSNonRetriableError, type Admin } from 'kafkajs';
import pino from 'pino';
import { eventually, requireEnv } from '@bus/testing';
import {
  createConsumer,
  createKafka,
  createProducer,
  decodeMessageHeaders,
  encodeMessageHeaders,
  ensureTopics,
  messageKey,
  runBatches,
  runRecordBatches,
  sendAcked,
  sendAckedBatch,
  type ConsumerRun,
  type Kafka,
  type MessageHeaders,
} from './index';

const logger = pino({ level: 'warn' });
const KEYS = 10;
const PER_KEY = 30;

let kafka: Kafka;
let admin: Admin;
const topic = `test.roundtrip.${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  kafka = createKafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'kafka-roundtrip-test', logger });
  admin = kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
});

async function retentionOf(name: string): Promise<string | undefined> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name, configNames: ['retention.ms'] }],
  });
  return resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
}

describe('libs/kafka on the real broker', () => {
  it('creates a topic with its settings, and brings retention of an existing one to the config', async () => {
    const settings = (retentionMs: number) => [
      { topic, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: String(retentionMs) }] },
    ];
    await ensureTopics(admin, settings(7 * 86_400_000));
    expect(await retentionOf(topic)).toBe(String(7 * 86_400_000));
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(metadata?.partitions).toHaveLength(3);

    await ensureTopics(admin, settings(30 * 86_400_000));
    expect(await retentionOf(topic)).toBe(String(30 * 86_400_000));
  });

  it('keeps per-key order within a partition, with the bytes and headers intact', async () => {
    const producer = createProducer(kafka);
    await producer.connect();
    const sent = new Map<string, string[]>();
    const partitionOfKey = new Map<string, Set<number>>();
    // One sender per key, all keys at once: the gateway's shape (one in-flight send per correlation id).
    await Promise.all(
      Array.from({ length: KEYS }, async (_, k) => {
        const key = messageKey('wabcdefghijk2', `story-${k}`);
        sent.set(key, []);
        for (let i = 0; i < PER_KEY; i++) {
          const value = `{"n":${i},"key":"${key}","pad":"${'é'.repeat(i)}"}`;
          const headers: MessageHeaders = {
            workspace_id: 'wabcdefghijk2',
            message_id: `${key}#${i}`,
            message_type: 'telling.exposed',
            family: 'telling',
            producer_connection_id: 'cabcdefghijk2',
            content_hash: 'f'.repeat(64),
            accepted_at: new Date().toISOString(),
            traceparent: null,
          };
          const { partition } = await sendAcked(producer, {
            topic,
            key,
            value: Buffer.from(value, 'utf8'),
            headers: encodeMessageHeaders(headers) as Record<string, string>,
          });
          sent.get(key)?.push(value);
          partitionOfKey.set(key, (partitionOfKey.get(key) ?? new Set()).add(partition));
        }
      }),
    );
    await producer.disconnect();
    for (const partitions of partitionOfKey.values()) expect(partitions.size).toBe(1);

    const received = new Map<string, string[]>();
    const consumer = createConsumer(kafka, { groupId: `${topic}.reader` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let total = 0;
    const done = new Promise<void>((resolve) => {
      void runBatches(consumer, async (record, partition) => {
        const key = record.key?.toString('utf8') ?? '';
        const headers = decodeMessageHeaders(record.headers);
        expect(headers.message_id.startsWith(`${key}#`)).toBe(true);
        expect([...(partitionOfKey.get(key) ?? [])]).toEqual([partition]);
        received.set(key, [...(received.get(key) ?? []), record.value?.toString('utf8') ?? '']);
        if (++total === KEYS * PER_KEY) resolve();
      });
    });
    await done;
    await consumer.disconnect();
    expect(received).toEqual(sent);
  }, 60_000);

  it('gives each record of one batched send its own partition and offset, in the order sent', async () => {
    const batchTopic = `${topic}.batch`;
    await ensureTopics(admin, [{ topic: batchTopic, numPartitions: 3, replicationFactor: 1 }]);
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      const records = Array.from({ length: 40 }, (_, i) => ({ key: `key-${i % 7}`, value: Buffer.from(`value-${i}`), headers: {} }));
      const first = await sendAckedBatch(producer, batchTopic, records.slice(0, 20));
      const second = await sendAckedBatch(producer, batchTopic, records.slice(20));
      const placed = [...first, ...second];
      // Every record's answer names where it really is: fetch each back by partition and offset.
      const stored = new Map<string, string>();
      const consumer = createConsumer(kafka, { groupId: `${batchTopic}.reader` });
      await consumer.connect();
      await consumer.subscribe({ topic: batchTopic, fromBeginning: true });
      const done = new Promise<void>((resolve) => {
        void runBatches(consumer, async (record, partition) => {
          stored.set(`${partition}/${record.offset}`, record.value?.toString('utf8') ?? '');
          if (stored.size === records.length) resolve();
        });
      });
      await done;
      await consumer.disconnect();
      expect(placed.map((p) => stored.get(`${p.partition}/${p.offset}`))).toEqual(records.map((r) => r.value.toString('utf8')));
      // One key, one partition, as a single send would place it.
      const partitionsOfKey = new Map<string, Set<number>>();
      placed.forEach((p, i) => partitionsOfKey.set(records[i]!.key, (partitionsOfKey.get(records[i]!.key) ?? new Set()).add(p.partition)));
      for (const partitions of partitionsOfKey.values()) expect(partitions.size).toBe(1);
    } finally {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [batchTopic] }).catch(() => undefined);
    }
  }, 60_000);

  it('commits a partition at most once an interval: the last position within it, everything handled on flush', async () => {
    const pacedTopic = `${topic}.paced`;
    const groupId = `${pacedTopic}.reader`;
    const intervalMs = 2_000;
    await ensureTopics(admin, [{ topic: pacedTopic, numPartitions: 1, replicationFactor: 1 }]);
    const producer = createProducer(kafka);
    const consumer = createConsumer(kafka, { groupId });
    await producer.connect();
    try {
      const committed = async () => (await admin.fetchOffsets({ groupId, topics: [pacedTopic] }))[0]?.partitions[0]?.offset;
      let handled = 0;
      const produceAndHandle = async (n: number) => {
        await sendAcked(producer, { topic: pacedTopic, key: 'k', value: Buffer.from(`record ${n}`), headers: {} });
        await eventually(
          async () => handled,
          (count) => count === n,
          { what: `record ${n} handled`, timeoutMs: 20_000 },
        );
      };
      await consumer.connect();
      await consumer.subscribe({ topic: pacedTopic, fromBeginning: true });
      const run = await runRecordBatches(
        consumer,
        async (records) => {
          handled += records.length;
        },
        { commitIntervalMs: intervalMs },
      );
      await produceAndHandle(1);
      // The partition's first slice is committed at once...
      await eventually(committed, (offset) => offset === '1', { what: 'the first record committed' });
      const firstCommitSeen = Date.now();
      await produceAndHandle(2);
      // ...the next one waits for the interval's end (less the polls' lag in seeing the first), then is
      // committed with no record after it. Committed at once, it would be seen within a few round trips.
      await eventually(committed, (offset) => offset === '2', { what: 'the second record committed by the interval', timeoutMs: 3 * intervalMs });
      expect(Date.now() - firstCommitSeen).toBeGreaterThan(intervalMs / 2);
      await produceAndHandle(3);
      await run.stop();
      expect(await committed()).toBe('3');
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.deleteTopics({ topics: [pacedTopic] }).catch(() => undefined);
    }
  }, 60_000);

  it('starts a consumer again after a crash kafkajs would leave it stopped by, and replays what was not committed', async () => {
    const crashTopic = `${topic}.crash`;
    await ensureTopics(admin, [{ topic: crashTopic, numPartitions: 1, replicationFactor: 1 }]);
    const producer = createProducer(kafka);
    const consumer = createConsumer(kafka, { groupId: `${crashTopic}.reader` });
    await producer.connect();
    let run: ConsumerRun | undefined;
    try {
      const handled: string[] = [];
      let failed = false;
      await consumer.connect();
      await consumer.subscribe({ topic: crashTopic, fromBeginning: true });
      run = await runRecordBatches(
        consumer,
        async (records) => {
          // A non-retriable error, as kafkajs' own when a broker restart leaves no coordinator or broker to ask
          // (kafkajs issues 1445, 1513): kafkajs stops the consumer and does not start it again.
          if (!failed) {
            failed = true;
            throw new KafkaJSNonRetriableError('no broker available');
          }
          handled.push(...records.map((r) => r.value?.toString('utf8') ?? ''));
        },
        { restartAfterMs: 200, logger },
      );
      await sendAcked(producer, { topic: crashTopic, key: 'k', value: Buffer.from('first'), headers: {} });
      await eventually(
        () => handled,
        (values) => values.includes('first'),
        { what: 'the record handled after the crash', timeoutMs: 30_000 },
      );
      await sendAcked(producer, { topic: crashTopic, key: 'k', value: Buffer.from('second'), headers: {} });
      await eventually(
        () => handled,
        (values) => values.includes('second'),
        { what: 'a later record handled', timeoutMs: 30_000 },
      );
      expect(failed).toBe(true);
      expect(handled).toEqual(['first', 'second']);
    } finally {
      await (run ? run.stop() : consumer.disconnect());
      await producer.disconnect();
      await admin.deleteTopics({ topics: [crashTopic] }).catch(() => undefined);
    }
  }, 60_000);

  it('sets no timers while its connections idle (kafkajs 2.2.4 re-armed one every millisecond per connection)', async () => {
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      await sendAcked(producer, { topic, key: 'idle', value: Buffer.from('one record, so the producer holds a broker connection'), headers: {} });
      let timersSet = 0;
      const hook = createHook({
        init: (_id, type) => {
          if (type === 'Timeout') timersSet += 1;
        },
      });
      hook.enable();
      await sleep(500);
      hook.disable();
      // The sleep's own timer, and whatever else kafkajs sets on its own schedule; ~1,000 with the loop.
      expect(timersSet).toBeLessThan(20);
    } finally {
      await producer.disconnect();
    }
  });
});
