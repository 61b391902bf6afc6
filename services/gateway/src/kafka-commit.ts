import { context, propagation } from '@opentelemetry/api';
import { encodeMessageHeaders, messageKey, MESSAGES_TOPIC, sendAcked, type Producer } from '@bus/kafka';
import type { CommitToKafka } from './publish';

/**
 * The gateway's Kafka send: key `<workspace>/<correlation_id>`, the producer's exact bytes as the
 * value, DESIGN §4's headers including the W3C traceparent of the publish request, acks=all (the
 * brokers wait at most `ackTimeoutMs` for the in-sync replicas).
 */
export function kafkaCommitter(producer: Producer, topic: string = MESSAGES_TOPIC, opts: { ackTimeoutMs?: number } = {}): CommitToKafka {
  return async ({ key, value, headers }) => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return sendAcked(producer, {
      topic,
      key: messageKey(key.workspaceId, key.correlationId),
      value,
      headers: encodeMessageHeaders({
        workspace_id: key.workspaceId,
        message_id: headers.messageId,
        message_type: headers.messageType,
        family: headers.family,
        producer_connection_id: headers.producerConnectionId,
        content_hash: headers.contentHash,
        accepted_at: headers.acceptedAt.toISOString(),
        traceparent: carrier.traceparent ?? null,
      }) as Record<string, string>,
    }, opts);
  };
}
