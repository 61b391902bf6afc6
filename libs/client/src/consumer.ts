import { BusRefusedError } from './errors';
import { busRequest } from './request';
import { backoffMs, TokenSource, type ClientOptions } from './token';
import { pause as realPause } from './wait';

/** One received message (bus.json ReceivedMessage). */
export interface ReceivedMessage {
  /** Ack or nack with it; bound to this lease of this consumer. */
  receipt_handle: string;
  message_id: string;
  message_type: string;
  correlation_id: string;
  published_at: string;
  /** Receives that handed this message to this consumer, this one included (above 1: a redelivery). */
  receive_count: number;
  /** The producer's SOM message, parsed; null only for stored bytes the bus cannot render (then envelope_error and body_base64). */
  envelope: Record<string, unknown> | null;
  envelope_error?: string;
  body_base64?: string;
}

/** Per receipt handle: done, or failed with receipt_handle.invalid / receipt_handle.stale. */
export interface SettleResult {
  receipt_handle: string;
  status: 'done' | 'failed';
  code?: string;
}

/** The consumer's state and queue (bus.json ConsumerState), as its readiness route answers it. */
export interface ConsumerState {
  consumer_id: string;
  workspace_id: string;
  status: 'active';
  created_at: string | null;
  queue: { depth: number; visible: number; in_flight: number; delayed: number; dead_letters: number; oldest_age_seconds: number | null };
}

export interface ConsumerOptions extends ClientOptions {
  /** Messages per receive, 1 to 10 (default 10). */
  maxMessages?: number;
  /** Long poll, 0 to 20 s (default 20). */
  waitSeconds?: number;
  /** How long a received message stays leased (default: the bus's, 30 s). */
  visibilityTimeoutSeconds?: number;
  /** How long a message whose handler failed is held back before it is delivered again (default 0; the bus takes up to 900). */
  nackDelaySeconds?: number;
  /**
   * Told of what the run loop handles itself: a handler that failed (its message is nacked), a
   * receive that failed and is retried, a settle that failed. Never throws into the loop.
   */
  onError?: (error: unknown, context: { stage: 'handler' | 'receive' | 'settle'; message?: ReceivedMessage }) => void;
}

export type MessageHandler = (message: ReceivedMessage) => unknown;

/** Statuses of a receive that no retry changes: the run loop stops with them (a wrong token kind, a wrong consumer id, a bad parameter). */
const FATAL_STATUSES = new Set([400, 401, 403, 404]);

/**
 * A consumer connection: receive (long poll), ack and nack by receipt handle, and `run`, which
 * long-polls, runs a handler per message in the order received, acks what the handler finished and
 * nacks (with `nackDelaySeconds`) what it threw on, until `stop`.
 */
export class BusConsumer {
  private readonly tokens: TokenSource;
  private stopping = false;
  private abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: ConsumerOptions) {
    this.tokens = new TokenSource(options);
  }

  /**
   * Resolves with the consumer's state once the bus answers its readiness route
   * (GET /v1/tenants/{t}/consumers/{c}) with 200: from then on every message published is delivered to
   * it. A 503, a 429 and no answer at all (the bus still starting) are retried within maxAttempts and
   * maxRetryDelayMs; a 401 (after one new token), 403 (another consumer's id, a producer's
   * credentials) or 404 (a bus without the route) throws BusRefusedError at once, naming the rule.
   */
  async ready(): Promise<ConsumerState> {
    return (await busRequest<ConsumerState>(this.tokens, this.options, { method: 'GET', path: this.base() })).body;
  }

  /** One receive: up to maxMessages, waiting up to waitSeconds for the first. */
  async receive(
    opts: { maxMessages?: number; waitSeconds?: number; visibilityTimeoutSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<ReceivedMessage[]> {
    const visibility = opts.visibilityTimeoutSeconds ?? this.options.visibilityTimeoutSeconds;
    const answer = await busRequest<{ messages: ReceivedMessage[] }>(this.tokens, this.options, {
      method: 'GET',
      path: `${this.base()}/messages`,
      query: {
        max_messages: String(opts.maxMessages ?? this.options.maxMessages ?? 10),
        wait_seconds: String(opts.waitSeconds ?? this.options.waitSeconds ?? 20),
        ...(visibility === undefined ? {} : { visibility_timeout: String(visibility) }),
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return answer.body.messages;
  }

  /** Acks (removes) received messages; at most 10 handles a call. */
  async ack(receiptHandles: readonly string[]): Promise<SettleResult[]> {
    return this.settle('ack', { receipt_handles: receiptHandles });
  }

  /** Releases received messages (and the rest of their correlation id) for redelivery after `delaySeconds`. */
  async nack(receiptHandles: readonly string[], delaySeconds = 0): Promise<SettleResult[]> {
    return this.settle('nack', { receipt_handles: receiptHandles, delay_seconds: delaySeconds });
  }

  /**
   * Receives and handles messages until `stop`. Messages of one receive are handled one at a time, in
   * the order received (the bus hands out a correlation id's messages in order). When the handler
   * throws, the message is nacked and the later messages of its correlation id in the same receive
   * are not handled: the nack releases them too, and they come again after it. Resolves once stopped;
   * rejects when the bus refuses the consumer itself (401/403: revoked, wrong token kind or id).
   */
  run(handler: MessageHandler): Promise<void> {
    if (this.running) throw new Error('this consumer is already running');
    this.stopping = false;
    this.abort = new AbortController();
    this.running = this.loop(handler).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Stops `run` gracefully: a waiting receive is abandoned, the message being handled is finished and
   * settled, the rest of the current receive is nacked without delay (so it comes again at once, not
   * after its lease). Resolves when the loop has ended.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private async loop(handler: MessageHandler): Promise<void> {
    const wait = this.options.pause ?? realPause;
    let failures = 0;
    while (!this.stopping) {
      let batch: ReceivedMessage[];
      try {
        batch = await this.receive({ signal: this.abort.signal });
        failures = 0;
      } catch (err) {
        if (this.stopping) break;
        if (err instanceof BusRefusedError && FATAL_STATUSES.has(err.status)) throw err;
        this.report(err, { stage: 'receive' });
        failures += 1;
        await wait(backoffMs(failures, this.options.maxRetryDelayMs), this.abort.signal);
        continue;
      }
      await this.handleBatch(batch, handler);
    }
  }

  private async handleBatch(batch: readonly ReceivedMessage[], handler: MessageHandler): Promise<void> {
    const done: string[] = [];
    const failed: string[] = [];
    const released: string[] = [];
    const failedGroups = new Set<string>();
    for (const message of batch) {
      if (failedGroups.has(message.correlation_id)) continue;
      if (this.stopping) {
        released.push(message.receipt_handle);
        continue;
      }
      try {
        await handler(message);
        done.push(message.receipt_handle);
      } catch (err) {
        this.report(err, { stage: 'handler', message });
        failed.push(message.receipt_handle);
        failedGroups.add(message.correlation_id);
      }
    }
    // Acks first: a failed message's nack must not release a finished one of its correlation id.
    await this.settleQuietly(() => this.ack(done), done);
    await this.settleQuietly(() => this.nack(failed, this.options.nackDelaySeconds ?? 0), failed);
    await this.settleQuietly(() => this.nack(released, 0), released);
  }

  private async settleQuietly(settle: () => Promise<SettleResult[]>, handles: readonly string[]): Promise<void> {
    if (handles.length === 0) return;
    try {
      const results = await settle();
      for (const r of results) {
        if (r.status === 'failed')
          this.report(new Error(`${r.code ?? 'failed'}: a receipt handle was not settled (its lease ended and the message will come again)`), {
            stage: 'settle',
          });
      }
    } catch (err) {
      this.report(err, { stage: 'settle' });
    }
  }

  private async settle(route: 'ack' | 'nack', body: { receipt_handles: readonly string[]; delay_seconds?: number }): Promise<SettleResult[]> {
    const answer = await busRequest<{ results: SettleResult[] }>(this.tokens, this.options, {
      method: 'POST',
      path: `${this.base()}/${route}`,
      body: JSON.stringify(body),
    });
    return answer.body.results;
  }

  private base(): string {
    return `/consumers/${encodeURIComponent(this.options.clientId)}`;
  }

  private report(error: unknown, context: { stage: 'handler' | 'receive' | 'settle'; message?: ReceivedMessage }): void {
    try {
      this.options.onError?.(error, context);
    } catch {
      // The caller's reporter must not break the loop.
    }
  }
}
