import { Registry } from 'prom-client';
import pino from 'pino';
import type { Kafka } from '@bus/kafka';
import { registerKafkaLag } from './kafka-lag';

/** An admin client answering from fixed offsets, counting its requests. */
function fakeKafka(ends: Array<{ partition: number; low: string; high: string }>, committed: Array<{ partition: number; offset: string }>) {
  const calls = { topic: 0, group: 0, connect: 0, disconnect: 0 };
  const admin = {
    connect: async () => void calls.connect++,
    disconnect: async () => void calls.disconnect++,
    fetchTopicOffsets: async () => (calls.topic++, ends.map((e) => ({ ...e, offset: e.high }))),
    fetchOffsets: async () => (calls.group++, [{ topic: 'bus.messages.v1', partitions: committed.map((c) => ({ ...c, metadata: null })) }]),
  };
  return { kafka: { admin: () => admin } as unknown as Kafka, calls };
}

const logger = pino({ level: 'silent' });

it('reports high-water mark − committed offset per partition, counting all a never-committed partition holds', async () => {
  const { kafka, calls } = fakeKafka(
    [
      { partition: 0, low: '0', high: '120' },
      { partition: 1, low: '40', high: '90' },
      { partition: 2, low: '0', high: '7' },
    ],
    [
      { partition: 0, offset: '100' },
      { partition: 1, offset: '-1' },
      { partition: 2, offset: '7' },
    ],
  );
  const metrics = new Registry();
  const lag = registerKafkaLag({ kafka, groupId: 'bus-delivery', topic: 'bus.messages.v1', metrics, logger });
  const values = async () =>
    Object.fromEntries((await metrics.getMetricsAsJSON())[0]!.values.map((v) => [`${v.labels.group}/${v.labels.topic}/${v.labels.partition}`, v.value]));
  expect(await values()).toEqual({ 'bus-delivery/bus.messages.v1/0': 20, 'bus-delivery/bus.messages.v1/1': 50, 'bus-delivery/bus.messages.v1/2': 0 });
  // Scrapes in a row share one read (two admin requests) rather than asking Kafka each time.
  await values();
  await values();
  expect(calls).toMatchObject({ topic: 1, group: 1, connect: 1 });
  await lag.stop();
  expect(calls.disconnect).toBe(1);
});

it('shows no series, rather than stale ones, when Kafka does not answer', async () => {
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    fetchTopicOffsets: () => Promise.reject(new Error('down')),
    fetchOffsets: async () => [],
  };
  const metrics = new Registry();
  registerKafkaLag({ kafka: { admin: () => admin } as unknown as Kafka, groupId: 'g', topic: 't', metrics, logger });
  expect((await metrics.getMetricsAsJSON())[0]!.values).toEqual([]);
});
