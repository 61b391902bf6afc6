import { randomUUID } from 'node:crypto';
import type { MessageToEnqueue } from './delivery-store';

let nextOffset = 0;

/**
 * A message as delivery hands it to the store — a `telling.started` (or `fields.messageType`) of `correlationId` with a fresh
 * message id, at the next Kafka offset of partition 0 — for the tests and benches that fill queues
 * without Kafka. `body` defaults to a small JSON object naming the message.
 */
export function messageToEnqueue(
  workspaceId: string,
  correlationId: string,
  fields: Partial<Pick<MessageToEnqueue, 'messageId' | 'body' | 'messageType'>> = {},
): MessageToEnqueue {
  const messageId = fields.messageId ?? randomUUID();
  return {
    workspaceId,
    messageId,
    body: fields.body ?? Buffer.from(JSON.stringify({ message_id: messageId, correlation_id: correlationId })),
    messageType: fields.messageType ?? 'telling.started',
    correlationId,
    publishedAt: new Date(),
    kafkaPartition: 0,
    kafkaOffset: String(nextOffset++),
    traceparent: null,
  };
}
