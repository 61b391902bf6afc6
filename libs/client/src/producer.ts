import type { Violation } from './errors';
import { busRequest } from './request';
import { TokenSource, type ClientOptions } from './token';

/** What the bus answered to an accepted publish or validate (docs/api.md#publish-responses). */
export interface PublishResult {
  /** 202 accepted; 200 a duplicate (this message_id was accepted before with the same content: nothing new published). */
  status: 200 | 202;
  message_id: string;
  duplicate: boolean;
  /** Absent on a duplicate. */
  message_type?: string;
  family?: string | null;
  /** Violations reported without refusing (e.g. a skewed occurred_at). */
  tolerated: Violation[];
  /** True on validate: nothing was published or recorded. */
  dry_run: boolean;
  /** Requests made, the retries included. */
  attempts: number;
}

/** A SOM message: an object (serialised once, so every retry sends the same bytes) or the exact bytes to send. */
export type Publishable = Record<string, unknown> | string | Uint8Array;

/** Where one consumer connection's copy of a message is. */
export type DeliveryStateName = 'not_enqueued' | 'queued' | 'leased' | 'acked' | 'purged' | 'dead_lettered' | 'discarded';

/** A fault the Sandbox injected into a delivery (docs/testing-tools.md, consumer fault injection). */
export interface InjectedFault {
  kind: 'duplicate' | 'delay' | 'early_expiry';
  at: string;
  /** The delay added (delay) or the shortened lease's length (early_expiry); null for a duplicate. */
  detail_ms: number | null;
}

/** One consumer connection's copy of a message in a trace (GET /v1/tenants/{t}/messages/{message_id}). */
export interface DeliveryTrace {
  consumer_id: string;
  /** The consumer connection's own status (active, revoked, removed). */
  connection_status: string;
  /**
   * not_enqueued: delivery has not enqueued it for this consumer (not caught up yet, or the consumer
   * came after it); queued: receivable once `visible_at` has passed; leased: handed out, the lease
   * ends at `visible_at`; acked. A lease that ran out without a new receive counts as queued again.
   */
  state: DeliveryStateName;
  enqueued_at: string | null;
  /** When it becomes receivable (queued) or when the lease ends (leased); null otherwise. */
  visible_at: string | null;
  receive_count: number;
  acked_at: string | null;
  nack_count: number;
  last_nacked_at: string | null;
  /** When it was last dead-lettered, and what the operator did about it (null while open). */
  dead_letter: { dead_lettered_at: string; resolution: 'redriven' | 'discarded' | null; resolved_at: string | null } | null;
  /** The faults injected into it, oldest first. */
  faults: InjectedFault[];
}

export interface MessageTrace {
  message_id: string;
  message_type: string;
  correlation_id: string;
  producer_connection_id: string;
  accepted_at: string;
  kafka: { partition: number; offset: string };
  /** Whether consumer connections were left out (more than 2,000, removed ones holding a copy included). */
  deliveries_truncated: boolean;
  deliveries: DeliveryTrace[];
}

export interface RecentRefusals {
  connection_id: string;
  refusals: Array<{
    id: number;
    mode: 'publish' | 'validate';
    message_id: string | null;
    message_type: string | null;
    correlation_id: string | null;
    status: number;
    /** The first few violations; `violations_omitted` counts the rest. */
    violations: Violation[];
    violations_omitted: number;
    refused_at: string;
  }>;
  /** Pass as `before` to read the next (older) page; null on the last page. */
  next_before: number | null;
  rate_limited: { rate_limited: number; quota_exceeded: number; last_refused_at: string | null };
}

export interface StoryView {
  correlation_id: string;
  state: Record<string, unknown> | null;
  state_updated_at: string | null;
  messages: Array<{ message_id: string; message_type: string; accepted_at: string; producer_connection_id: string }>;
  truncated: boolean;
}

/** One line of a story export (bus.json StoryExportLine; docs/testing-tools.md#story-export), told apart by `type`. */
export type StoryExportLine = { type: 'story' | 'message' | 'delivery' | 'truncated' | 'end' } & Record<string, unknown>;

export interface StoryExport {
  /** The answer as the bus sent it, to be saved as it is (an .ndjson file). */
  ndjson: string;
  lines: StoryExportLine[];
  /** The last line is `end`: nothing was cut off on the way (a `truncated` line may still say the export's bounds left messages out). */
  complete: boolean;
}

/**
 * A producer connection: publish and validate SOM messages (docs/api.md#publish-and-validate) with a cached, renewed token
 * and safe retries; a refusal is thrown as BusRefusedError with the bus's violations. Also the
 * producer's tester routes: trace a message, the recent refusals, a story and its export (docs/testing-tools.md).
 */
export class BusProducer {
  private readonly tokens: TokenSource;

  /** `tokens`: a token source of these options already in use (its token is reused), else a new one. */
  constructor(
    private readonly options: ClientOptions,
    tokens?: TokenSource,
  ) {
    this.tokens = tokens ?? new TokenSource(options);
  }

  publish(message: Publishable): Promise<PublishResult> {
    return this.send('/messages', message);
  }

  /** Dry run: the same checks with the app's permissions and the story state; nothing published or recorded. */
  validate(message: Publishable): Promise<PublishResult> {
    return this.send('/validate', message);
  }

  /** Where an accepted message is: its acceptance and, per consumer connection of the workspace, its delivery state. */
  async trace(messageId: string): Promise<MessageTrace> {
    return (await busRequest<MessageTrace>(this.tokens, this.options, { method: 'GET', path: `/messages/${encodeURIComponent(messageId)}` })).body;
  }

  /** A page of this connection's newest refusals (100 kept; `before` is a page's next_before) and its rate-limit counts. */
  async refusals(page: { limit?: number; before?: number } = {}): Promise<RecentRefusals> {
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set('limit', String(page.limit));
    if (page.before !== undefined) query.set('before', String(page.before));
    const path = query.size > 0 ? `/refusals?${query}` : '/refusals';
    return (await busRequest<RecentRefusals>(this.tokens, this.options, { method: 'GET', path })).body;
  }

  /** The story state and accepted messages of a correlation id. */
  async story(correlationId: string): Promise<StoryView> {
    return (await busRequest<StoryView>(this.tokens, this.options, { method: 'GET', path: `/stories/${encodeURIComponent(correlationId)}` })).body;
  }

  /** What a story exchanged: its messages with their exact bytes and every consumer connection's copies, as NDJSON. */
  async exportStory(correlationId: string): Promise<StoryExport> {
    const answer = await busRequest<unknown>(this.tokens, this.options, { method: 'GET', path: `/stories/${encodeURIComponent(correlationId)}/export` });
    const lines = answer.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StoryExportLine);
    return { ndjson: answer.text, lines, complete: lines.at(-1)?.type === 'end' };
  }

  private async send(path: '/messages' | '/validate', message: Publishable): Promise<PublishResult> {
    const body = typeof message === 'string' || message instanceof Uint8Array ? message : JSON.stringify(message);
    const answer = await busRequest<{
      message_id: string;
      duplicate?: true;
      message_type?: string;
      family?: string | null;
      tolerated?: Violation[];
      dry_run?: true;
    }>(this.tokens, this.options, { method: 'POST', path, body });
    const b = answer.body;
    return {
      status: answer.status === 200 ? 200 : 202,
      message_id: b.message_id,
      duplicate: b.duplicate === true,
      ...(b.message_type === undefined ? {} : { message_type: b.message_type }),
      ...(b.family === undefined ? {} : { family: b.family }),
      tolerated: b.tolerated ?? [],
      dry_run: b.dry_run === true,
      attempts: answer.attempts,
    };
  }
}
