import pino from 'pino';
import { defaultDeliveryGroupId } from '@bus/delivery';
import { createKafka, MESSAGES_TOPIC } from '@bus/kafka';
import type { RunningBus } from './bus';

/**
 * Resolves once the bus's delivery group has committed every record the messages topic held when it
 * was called. A new bus's group reads the shared topic's whole history first (docs/delivery.md), tens
 * of thousands of other runs' records on a developer machine; a test that times publish → receive
 * waits for this first, so that history's length is not part of what it measures.
 */
export async function deliveryCaughtUp(bus: RunningBus, timeoutMs = 120_000): Promise<void> {
  const kafka = createKafka({ brokers: (bus.env.KAFKA_BROKERS as string).split(','), clientId: 'test-delivery-lag', logger: pino({ level: 'warn' }) });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(MESSAGES_TOPIC);
    const groupId = bus.env.DELIVERY_GROUP_ID ?? defaultDeliveryGroupId(bus.env.DATABASE_URL as string);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [MESSAGES_TOPIC] });
      const behind = ends.filter((end) => {
        const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
        return BigInt(offset) < BigInt(end.high);
      });
      if (behind.length === 0) return;
      if (Date.now() > deadline) throw new Error(`delivery group ${groupId} still behind on partitions ${behind.map((b) => b.partition).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await admin.disconnect();
  }
}
