import { context, propagation, trace } from '@opentelemetry/api';
import { encodeMessageHeaders, messageKey, MESSAGES_TOPIC, sendAckedBatch, type Producer } from '@bus/kafka';
import type { CommitToKafka } from './group-commit';

/**
 * The gateway's Kafka send: key `<workspace>/<correlation_id>`, the producer's exact bytes as the
 * value, docs/architecture.md#data-flow headers including the W3C traceparent of each publish request, acks=all (the
 * brokers wait at most `ackTimeoutMs` for the in-sync replicas). A group commit's records go in one
 * produce request.
 */
export function kafkaCommitter(producer: Producer, topic: string = MESSAGES_TOPIC, opts: { ackTimeoutMs?: number } = {}): CommitToKafka {
  return (records) =>
    sendAckedBatch(
      producer,
      topic,
      records.map(({ workspaceId, correlationId, value, headers }) => ({
        key: messageKey(workspaceId, correlationId),
        value,
        headers: encodeMessageHeaders({
          workspace_id: workspaceId,
          message_id: headers.messageId,
          message_type: headers.messageType,
          family: headers.family,
          producer_connection_id: headers.producerConnectionId,
          content_hash: headers.contentHash,
          accepted_at: headers.acceptedAt.toISOString(),
          traceparent: headers.traceparent,
        }) as Record<string, string>,
      })),
      opts,
    );
}

/** The W3C traceparent of the active context (the publish request's span), or null when none is sampled. */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * Marks the publish request's span (HTTP's SERVER span, active here) as the send of a message to
 * Kafka, by OpenTelemetry's messaging conventions; bounded attributes, never the body.
 */
export function markSendSpan(messageId: string, topic: string = MESSAGES_TOPIC): void {
  trace.getActiveSpan()?.setAttributes({
    'messaging.system': 'kafka',
    'messaging.operation.name': 'send',
    'messaging.operation.type': 'send',
    'messaging.destination.name': topic,
    'messaging.message.id': messageId,
  });
}
