/**
 * What the portal's admin API asks of delivery's consumer queues: replay from the archive, queue stats
 * and the redrive of quarantined records. Delivery implements it (services/delivery queueOperations);
 * the portal only knows this contract, and a composition root hands it the implementation.
 */

/**
 * Why a record of bus.messages.v1 may not be delivered (invariant A): the `reason` of
 * `quarantined_records` and of `bus_delivery_quarantined_total` (which also counts `workspace.unknown`,
 * never stored).
 */
export type RefusalReason = 'headers.unreadable' | 'value.missing' | 'value.unreadable' | 'acceptance.missing' | 'acceptance.hash_mismatch';

export const REFUSAL_REASONS: readonly RefusalReason[] = ['headers.unreadable', 'value.missing', 'value.unreadable', 'acceptance.missing', 'acceptance.hash_mismatch'];

/** What a redrive did with one quarantined record (docs/admin.md, "Quarantine"). */
export type RedriveResult =
  | { id: string; outcome: 'redriven'; workspace_id: string; message_id: string; deliveries: number }
  | { id: string; outcome: 'refused'; workspace_id: string | null; message_id: string | null; reason: RefusalReason }
  | { id: string; outcome: 'not_found' };

export type RedriveOutcome = RedriveResult['outcome'];

export interface ReplayRequest {
  workspaceId: string;
  consumerId: string;
  /** Every archived message of the workspace published at or after this time. */
  since: Date;
}

export interface ReplayResult {
  /** Records of the workspace read from the archive. */
  scanned: number;
  /** Deliveries made live again (new, or acked ones queued again). */
  replayed: number;
  /** Records of the workspace without a matching acceptance: never delivered (invariant A). */
  skipped: number;
}

export interface QueueStats {
  consumerId: string;
  depth: number;
  inFlight: number;
  oldestEnqueuedAt: Date;
}

export interface QueueOperations {
  replay(req: ReplayRequest): Promise<ReplayResult>;
  /** Undefined when the consumer has nothing un-acked. */
  stats(consumerId: string): Promise<QueueStats | undefined>;
  /** Each quarantined record's redrive, in the order of `ids`. */
  redrive(ids: readonly string[]): Promise<RedriveResult[]>;
}
