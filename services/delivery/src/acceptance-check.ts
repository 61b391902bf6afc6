import type { IHeaders } from 'kafkajs';
import { decodeMessageHeaders, HeaderDecodeError, type MessageHeaders } from '@bus/kafka';
import { acceptedMessage, type DeliveryStore, type MessageToEnqueue } from './delivery-store';
import { recordContentHash } from './record-content';

/**
 * Why a record of bus.messages.v1 may not be delivered (invariant A): the `reason` of
 * `quarantined_records` and of `bus_delivery_quarantined_total` (which also counts `workspace.unknown`,
 * never stored).
 */
export type RefusalReason = 'headers.unreadable' | 'value.missing' | 'value.unreadable' | 'acceptance.missing' | 'acceptance.hash_mismatch';

export const REFUSAL_REASONS: readonly RefusalReason[] = ['headers.unreadable', 'value.missing', 'value.unreadable', 'acceptance.missing', 'acceptance.hash_mismatch'];

/** A record as it came from Kafka, or as quarantine kept it. */
export interface RecordToCheck {
  headers: MessageHeaders;
  value: Buffer | null;
  partition: number;
  offset: string;
}

export type AcceptanceCheck = { accepted: true; message: MessageToEnqueue } | { accepted: false; reason: Exclude<RefusalReason, 'headers.unreadable'> };

/** Waiting for an acceptance the gateway may still be committing (delivery's first look only). */
export interface AcceptanceWait {
  waitMs: number;
  /** First re-check interval; doubles up to 500 ms. */
  recheckMs: number;
}

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
 * Invariant A, the one check behind delivery's enqueue, replay and the operator's redrive of
 * quarantined records: a record may be delivered only when Postgres holds its acceptance with the
 * content hash of the record's own bytes — recomputed here with the gateway's function; the
 * content_hash header is not trusted (whoever could alter the bytes could alter it too). Accepted, the
 * answer is the message as the store enqueues it. A value that is missing or not JSON is refused at
 * once: no commit can ever make it acceptable. Without an acceptance, `wait` re-checks for one the
 * gateway commits right after its Kafka ack; replay and redrive look once.
 */
export async function checkAcceptance(store: Pick<DeliveryStore, 'acceptance'>, record: RecordToCheck, wait?: AcceptanceWait): Promise<AcceptanceCheck> {
  if (record.value === null) return { accepted: false, reason: 'value.missing' };
  const hash = recordContentHash(record.value);
  if (hash === null) return { accepted: false, reason: 'value.unreadable' };

  const { workspace_id: workspaceId, message_id: messageId } = record.headers;
  const deadline = Date.now() + (wait?.waitMs ?? 0);
  let pause = wait?.recheckMs ?? 0;
  let acceptance = await store.acceptance(workspaceId, messageId);
  while (!acceptance && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
    pause = Math.min(pause * 2, 500);
    acceptance = await store.acceptance(workspaceId, messageId);
  }
  if (!acceptance) return { accepted: false, reason: 'acceptance.missing' };
  if (acceptance.contentHash !== hash) return { accepted: false, reason: 'acceptance.hash_mismatch' };
  return { accepted: true, message: acceptedMessage({ headers: record.headers, body: record.value, partition: record.partition, offset: record.offset }, acceptance) };
}
