import { randomUUID } from 'node:crypto';
import { som } from '@bus/schemas';

/** The SOM example of `type` as a new message: a fresh message_id, `correlationId`, occurred now, sent as `systemId`. */
export function exampleMessage(type: string, correlationId: string, systemId: string): Record<string, unknown> & { message_id: string } {
  return {
    ...(som.examples[type] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: correlationId,
    occurred_at: new Date().toISOString(),
    system_id: systemId,
  };
}
