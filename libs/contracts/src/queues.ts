/**
 * What the portal's admin API asks of delivery's consumer queues: replay from the archive, queue stats
 * and the redrive of quarantined records. libs/queue implements it (queueOperations);
 * the portal only knows this contract, and a composition root hands it the implementation.
 */

/**
 * Why a record of bus.messages.v1 may not be delivered (invariant A): the `reason` of
 * `quarantined_records` and of `bus_delivery_quarantined_total` (which also counts `workspace.unknown`,
 * never stored).
 */
export type RefusalReason = 'headers.unreadable' | 'value.missing' | 'value.unreadable' | 'acceptance.missing' | 'acceptance.hash_mismatch';

export const REFUSAL_REASONS: readonly RefusalReason[] = [
  'headers.unreadable',
  'value.missing',
  'value.unreadable',
  'acceptance.missing',
  'acceptance.hash_mismatch',
];

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
  /** Receivable now (SQS's ApproximateNumberOfMessages). */
  visible: number;
  inFlight: number;
  /** Waiting on a nack's delay (SQS's ApproximateNumberOfMessagesDelayed). */
  delayed: number;
  /** Open dead letters (counted in depth too: un-acked, never visible until redriven or discarded). */
  deadLetters: number;
  oldestEnqueuedAt: Date;
}

/** An open dead letter of a consumer (delivery's dead-letters.ts), as the admin API lists it. */
export interface DeadLetter {
  id: string;
  message_id: string;
  correlation_id: string;
  /** Receives it had when it was dead-lettered. */
  receive_count: number;
  dead_lettered_at: string;
}

export type DeadLetterResolution = 'redriven' | 'discarded';

export interface ResolvedDeadLetter extends DeadLetter {
  resolution: DeadLetterResolution;
  resolved_at: string;
}

/** One message of a consumer's queue as the message browser shows it (portal.json BrowsedMessage). */
export interface BrowsedMessage {
  message_id: string;
  message_type: string;
  correlation_id: string;
  published_at: string;
  receive_count: number;
  /** In flight: when its lease ends (it is receivable again then, unless acked). */
  lease_ends_at: string | null;
  /** The stored message as a receive hands it out, pretty-printed when it is JSON, cut at BROWSE_PREVIEW_CHARS. */
  body_preview: string;
  body_bytes: number;
}

/** What a consumer's queue holds now: what a receive would take next, in order, and what is leased. */
export interface QueueBrowse {
  waiting: BrowsedMessage[];
  in_flight: BrowsedMessage[];
  /** More are waiting, or in flight, than listed. */
  waiting_truncated: boolean;
  in_flight_truncated: boolean;
}

/** What the message browser holds back from a consumer's receive, as its testing settings say (libs/queue ReceiveGate). */
export interface BrowseGate {
  receiveLimit: number | null;
  delayMs: number;
}

export interface QueueOperations {
  replay(req: ReplayRequest): Promise<ReplayResult>;
  /** Undefined when the consumer has nothing un-acked. */
  stats(consumerId: string): Promise<QueueStats | undefined>;
  /** Each quarantined record's redrive, in the order of `ids`. */
  redrive(ids: readonly string[]): Promise<RedriveResult[]>;
  /** The consumer's open dead letters, oldest first. */
  deadLetters(consumerId: string): Promise<{ dead_letters: DeadLetter[]; truncated: boolean }>;
  /** Up to `max` messages waiting (in receive order, under the consumer's gate) and up to `max` in flight; nothing changed. */
  browse(consumerId: string, max: number, gate?: BrowseGate): Promise<QueueBrowse>;
  /** Redrives or discards one open dead letter; undefined when the consumer has no such open one. */
  resolveDeadLetter(consumerId: string, id: string, resolution: DeadLetterResolution): Promise<ResolvedDeadLetter | undefined>;
  /**
   * Purges the consumer's queue: every message waiting or in flight is removed (its receipt handles
   * stale), open dead letters stay; resolves with how many deliveries were removed.
   */
  purge(consumerId: string): Promise<number>;
}
