import type { IHeaders } from 'kafkajs';
import type { RefusalReason } from '@bus/contracts';
import { decodeMessageHeaders, HeaderDecodeError, type MessageHeaders } from '@bus/kafka';
import { acceptedMessage, type Acceptance, type DeliveryStore, type MessageToEnqueue } from './delivery-store';
import { recordContentHash } from './record-content';

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

/** A record's value with its content hash, or why it can never be delivered (no commit can make it acceptable). */
export type RecordContent = { body: Buffer; hash: string } | { reason: 'value.missing' | 'value.unreadable' };

/** The content hash of a record's value, recomputed with the gateway's function (record-content.ts). */
export function readRecordContent(value: Buffer | null): RecordContent {
  if (value === null) return { reason: 'value.missing' };
  const hash = recordContentHash(value);
  return hash === null ? { reason: 'value.unreadable' } : { body: value, hash };
}

/**
 * Invariant A's verdict on a record of readable `content`, given the acceptance Postgres holds for its
 * id (null: none yet). Accepted, the answer is the message as the store enqueues it.
 */
export function judgeAcceptance(record: Omit<RecordToCheck, 'value'>, content: { body: Buffer; hash: string }, acceptance: Acceptance | null): AcceptanceCheck {
  if (!acceptance) return { accepted: false, reason: 'acceptance.missing' };
  if (acceptance.contentHash !== content.hash) return { accepted: false, reason: 'acceptance.hash_mismatch' };
  return {
    accepted: true,
    message: acceptedMessage({ headers: record.headers, body: content.body, partition: record.partition, offset: record.offset }, acceptance),
  };
}

/**
 * Invariant A, the one check behind delivery's enqueue (in batches, services/delivery enqueue.ts), replay and the
 * operator's redrive and the automatic re-check of quarantined records: a record may be delivered only when
 * Postgres holds its acceptance with the content hash of the record's own bytes — recomputed here with
 * the gateway's function; the content_hash header is not trusted (whoever could alter the bytes could
 * alter it too). A value that is missing or not JSON is refused at once: no commit can ever make it
 * acceptable. This looks once; delivery's first look waits for an acceptance in flight (services/delivery enqueue.ts).
 */
export async function checkAcceptance(store: Pick<DeliveryStore, 'acceptance'>, record: RecordToCheck): Promise<AcceptanceCheck> {
  const content = readRecordContent(record.value);
  if ('reason' in content) return { accepted: false, reason: content.reason };
  const { workspace_id: workspaceId, message_id: messageId } = record.headers;
  return judgeAcceptance(record, content, await store.acceptance(workspaceId, messageId));
}
