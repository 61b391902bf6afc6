import type { IHeaders } from 'kafkajs';
import type { RefusalReason } from '@bus/contracts';
import { decodeMessageHeaders, HeaderDecodeError, type MessageHeaders } from '@bus/kafka';
import { acceptedMessage, type Acceptance, type DeliveryStore, type MessageToEnqueue } from './delivery-store';
import { RecordValue } from './record-content';

/** A record as it came from Kafka, or as quarantine kept it. */
export interface RecordToCheck {
  headers: MessageHeaders;
  value: Buffer | null;
  partition: number;
  offset: string;
}

export type AcceptanceCheck = { accepted: true; message: MessageToEnqueue } | { accepted: false; reason: Exclude<RefusalReason, 'headers.unreadable'> };

/** The headers of a record, or null when they lack what the bus writes (`headers.unreadable`). */
export function readMessageHeaders(headers: IHeaders | undefined): MessageHeaders | null {
  try {
    return decodeMessageHeaders(headers);
  } catch (err) {
    if (err instanceof HeaderDecodeError) return null;
    throw err;
  }
}

/**
 * A record's value ready for a verdict, or why it can never be delivered (no commit can make it
 * acceptable). The value is parsed here, at once: replay, redrive and the re-check of quarantined
 * records report an unreadable value as such whether or not an acceptance exists. Delivery's enqueue
 * makes its RecordValue itself and parses only what the digest does not settle.
 */
export function readRecordContent(value: Buffer | null): RecordValue | { reason: 'value.missing' | 'value.unreadable' } {
  if (value === null) return { reason: 'value.missing' };
  const content = new RecordValue(value);
  return content.contentHash() === null ? { reason: 'value.unreadable' } : content;
}

/**
 * Invariant A's verdict on a record's value, given the acceptance Postgres holds for its id (null:
 * none yet). Bytes whose digest is the one recorded at acceptance are the accepted message; other
 * bytes are accepted only when they are JSON with the accepted content hash (as before migration 016:
 * rows without a digest, or a producer's message re-serialised on its way through Kafka). Accepted,
 * the answer is the message as the store enqueues it.
 */
export function judgeAcceptance(record: Omit<RecordToCheck, 'value'>, content: RecordValue, acceptance: Acceptance | null): AcceptanceCheck {
  if (!acceptance) return { accepted: false, reason: 'acceptance.missing' };
  if (!acceptance.bodySha256?.equals(content.digest)) {
    const hash = content.contentHash();
    if (hash === null) return { accepted: false, reason: 'value.unreadable' };
    if (hash !== acceptance.contentHash) return { accepted: false, reason: 'acceptance.hash_mismatch' };
  }
  return {
    accepted: true,
    message: acceptedMessage({ headers: record.headers, body: content.body, partition: record.partition, offset: record.offset }, acceptance),
  };
}

/**
 * Invariant A, the one check behind delivery's enqueue (in batches, services/delivery enqueue.ts), replay and the
 * operator's redrive and the automatic re-check of quarantined records: a record may be delivered only when
 * Postgres holds its acceptance with the digest or the content hash of the record's own bytes — recomputed here with
 * the gateway's functions; the content_hash header is not trusted (whoever could alter the bytes could
 * alter it too). A value that is missing or not JSON is refused at once: no commit can ever make it
 * acceptable. This looks once; delivery's first look waits for an acceptance in flight (services/delivery enqueue.ts).
 */
export async function checkAcceptance(store: Pick<DeliveryStore, 'acceptance'>, record: RecordToCheck): Promise<AcceptanceCheck> {
  const content = readRecordContent(record.value);
  if ('reason' in content) return { accepted: false, reason: content.reason };
  const { workspace_id: workspaceId, message_id: messageId } = record.headers;
  return judgeAcceptance(record, content, await store.acceptance(workspaceId, messageId));
}
