import pino from 'pino';
import { defaultDeliveryGroupId } from '@bus/delivery';
import { createKafka, MESSAGES_TOPIC } from '@bus/kafka';
import { waitForGroupCaughtUp } from '@bus/testing';
import type { RunningBus } from './bus';

/** Resolves once the bus's delivery group has caught up with the messages topic (see waitForGroupCaughtUp). */
export async function deliveryCaughtUp(bus: RunningBus, timeoutMs = 120_000): Promise<void> {
  const kafka = createKafka({ brokers: (bus.env.KAFKA_BROKERS as string).split(','), clientId: 'test-delivery-lag', logger: pino({ level: 'warn' }) });
  await waitForGroupCaughtUp(kafka.admin(), bus.env.DELIVERY_GROUP_ID ?? defaultDeliveryGroupId(bus.env.DATABASE_URL as string), MESSAGES_TOPIC, timeoutMs);
}
