import type { IHeaders } from 'kafkajs';

/**
 * Headers of a record on bus.messages.v1 (docs/architecture.md#data-flow). The value is the producer's exact bytes, so
 * everything the bus knows about the message travels here. All values are UTF-8 strings on the wire.
 */
export interface MessageHeaders {
  workspace_id: string;
  message_id: string;
  message_type: string;
  /** Sequence family (`telling`, `link`) or null for types without one; the header is absent then. */
  family: string | null;
  producer_connection_id: string;
  /**
   * The gateway's content hash (@bus/som contentHash) of the value, for operators reading records.
   * Delivery does not trust it: it recomputes the hash from the value (invariant A).
   */
  content_hash: string;
  /** RFC 3339 time the gateway accepted the message. */
  accepted_at: string;
  /**
   * W3C trace context, so a trace runs from publish through delivery to receive. Decoded only when
   * well formed (a version-00 traceparent, 55 characters), since delivery stores it with the message.
   */
  traceparent: string | null;
}

const REQUIRED = ['workspace_id', 'message_id', 'message_type', 'producer_connection_id', 'content_hash', 'accepted_at'] as const;
const OPTIONAL = ['family', 'traceparent'] as const;

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export class HeaderDecodeError extends Error {
  override readonly name = 'HeaderDecodeError';
}

export function encodeMessageHeaders(h: MessageHeaders): IHeaders {
  const out: IHeaders = {};
  for (const key of REQUIRED) out[key] = h[key];
  for (const key of OPTIONAL) {
    const value = h[key];
    if (value !== null) out[key] = value;
  }
  return out;
}

/** A record's headers as UTF-8 strings: the first value of a repeated header; absent ones left out. */
export function stringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined && value !== null) out[key] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  }
  return out;
}

export function decodeMessageHeaders(headers: IHeaders | undefined): MessageHeaders {
  const text = stringHeaders(headers);
  const read = (key: string): string | null => text[key] ?? null;
  const missing = REQUIRED.filter((k) => read(k) === null);
  if (missing.length > 0) throw new HeaderDecodeError(`record lacks headers: ${missing.join(', ')}`);
  const traceparent = read('traceparent');
  return {
    workspace_id: read('workspace_id') as string,
    message_id: read('message_id') as string,
    message_type: read('message_type') as string,
    family: read('family'),
    producer_connection_id: read('producer_connection_id') as string,
    content_hash: read('content_hash') as string,
    accepted_at: read('accepted_at') as string,
    traceparent: traceparent !== null && TRACEPARENT.test(traceparent) ? traceparent : null,
  };
}

/** Kafka key of a message: per-correlation order within a workspace rides on the partitioner. */
export function messageKey(workspaceId: string, correlationId: string): string {
  return `${workspaceId}/${correlationId}`;
}
