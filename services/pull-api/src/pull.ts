import { trace } from '@opentelemetry/api';
import { Counter, type Registry } from 'prom-client';
import { METRICS, inSpan, publishTraceContext, type ActivityRecorder, type Logger } from '@bus/observability';
import { renderEnvelope, type UnrenderableReason } from './envelope';
import type { QueueNotifier } from './notifier';
import type { ConsumerTools } from '@bus/db';
import type { ConnectionUse } from '@bus/identity';
import type { ConsumerToolsStore, FaultKind, LeasedMessage, PeekedMessage, QueueStore, ReceiveGate } from '@bus/queue';
import type { ReceiptHandles } from './receipt';

export interface PullDeps {
  store: QueueStore;
  /** Peek, dead letters and fault injection: only a connection with consumer tools set uses them. */
  tools: ConsumerToolsStore;
  notifier: QueueNotifier;
  handles: ReceiptHandles;
  /** Where a message handed out without its envelope is reported (ids and reason, never the body). */
  logger: Logger;
  metrics: PullMetrics;
  /** The portal's per-minute activity: each ack done, counted in memory. */
  activity: Pick<ActivityRecorder, 'acked'>;
  /** A receive uses its connection: last_used_at (to the minute, never a write per request). */
  connectionUse: ConnectionUse;
}

export interface PullMetrics {
  unrenderable: Counter<'reason'>;
  faultsInjected: Counter<'kind'>;
  deadLettered: Counter;
}

/** The pull API's own counters, registered once per process. */
export function createPullMetrics(registry: Registry): PullMetrics {
  return {
    unrenderable: new Counter({
      ...METRICS.pullUnrenderable,
      help: 'Messages handed out without an envelope because their stored bytes are not a JSON object (each receive counts), by reason',
      registers: [registry],
    }),
    faultsInjected: new Counter({
      ...METRICS.consumerFaultsInjected,
      help: "Faults injected into consumer deliveries by the operator's Sandbox settings, by kind (duplicate, delay, early_expiry)",
      registers: [registry],
    }),
    deadLettered: new Counter({
      ...METRICS.deadLettersMoved,
      help: "Messages moved to a consumer's dead-letter list after reaching its receive threshold",
      registers: [registry],
    }),
  };
}

export interface ReceiveOptions {
  maxMessages: number;
  waitMs: number;
  visibilityMs: number;
  /** Ends the wait early, e.g. when the client went away. */
  signal?: AbortSignal;
  /** The connection's testing settings (the bearer identity's); null: the plain receive. */
  tools?: ConsumerTools | null;
}

/** What a connection's settings hold back from a receive; undefined when nothing is (the plain statements). */
export function receiveGate(tools: ConsumerTools | null | undefined): ReceiveGate | undefined {
  if (!tools) return undefined;
  return { receiveLimit: tools.maxReceives, delayMs: tools.faults.delayMs };
}

/**
 * A receive with long poll: answers as soon as anything is receivable, else waits until a
 * notification for this consumer (delivery's NOTIFY, a nack), the next visible_at of its queue
 * (a nack delay or a lease running out), or the deadline, whichever is first. The subscription is
 * taken before each read, so a NOTIFY between the read and the wait is never lost. Once the process
 * drains (SIGTERM) it answers what it read without waiting: an empty answer, not a cut connection.
 */
export function receive(deps: PullDeps, consumerId: string, opts: ReceiveOptions): Promise<LeasedMessage[]> {
  void deps.connectionUse.used(consumerId);
  // One span per receive (long poll included), a child of the request's span; each message it hands
  // out links it to that message's publish trace (a link, not a parent: one receive serves many
  // publishes). Bounded attributes: the consumer connection and a count, never bodies or handles.
  // The consumer's queue is the destination: delivery filled it from the Kafka topic.
  const attributes = {
    'messaging.system': 'kafka',
    'messaging.operation.name': 'receive',
    'messaging.operation.type': 'receive',
    'messaging.destination.name': consumerId,
    'bus.consumer_id': consumerId,
  };
  return trace.getTracer('@bus/pull-api').startActiveSpan('pull receive', { attributes }, (span) =>
    inSpan(span, async () => {
      const messages = await receiveWaiting(deps, consumerId, opts);
      if (opts.tools && messages.length > 0) await injectReceiveFaults(deps, consumerId, messages, opts.visibilityMs, opts.tools);
      span.setAttribute('messaging.batch.message_count', messages.length);
      span.addLinks(
        messages.flatMap((m) => {
          const context = trace.getSpanContext(publishTraceContext(m.traceparent));
          return context ? [{ context, attributes: { 'messaging.message.id': m.messageId } }] : [];
        }),
      );
      return messages;
    }),
  );
}

async function receiveWaiting(deps: PullDeps, consumerId: string, opts: ReceiveOptions): Promise<LeasedMessage[]> {
  const deadline = Date.now() + opts.waitMs;
  const gate = receiveGate(opts.tools);
  const maxReceives = opts.tools?.maxReceives ?? null;
  for (;;) {
    // A client that hung up (before the first read, or while parked) gets no further read: what it
    // leased would stay invisible to every other receive for its visibility timeout.
    if (opts.signal?.aborted) return [];
    let woken = false;
    let wake: () => void = () => undefined;
    const wokenUp = new Promise<void>((resolve) => {
      wake = () => {
        woken = true;
        resolve();
      };
    });
    const unsubscribe = deps.notifier.subscribe(consumerId, wake);
    try {
      if (maxReceives !== null) countDeadLettered(deps, await deps.tools.deadLetterDue(consumerId, maxReceives));
      const { messages, contended, nextVisibleAt } = await deps.store.receive(consumerId, opts.maxMessages, opts.visibilityMs, gate);
      if (messages.length > 0 || Date.now() >= deadline || opts.signal?.aborted || deps.notifier.draining) return messages;
      // Another receive held the receivable heads for the moment of its transaction: read again
      // once it is done (it either leased them or rolled back) instead of sleeping until a NOTIFY.
      if (woken || contended) {
        if (contended) await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const until = Math.min(deadline, nextVisibleAt ? nextVisibleAt.getTime() + 5 : Number.POSITIVE_INFINITY);
      // The shutdown test waits for this line before it signals: the poll is parked for certain.
      deps.logger.debug({ consumer_id: consumerId, wait_ms: until - Date.now() }, 'long poll waiting');
      await waitFor(wokenUp, until - Date.now(), opts.signal);
      // Woken by the drain: answer now without another read, so nothing is leased that the drain's
      // cut (SHUTDOWN_DRAIN_TIMEOUT, however short) could keep from its client.
      if (deps.notifier.draining) return [];
    } finally {
      unsubscribe();
    }
  }
}

function countDeadLettered(deps: PullDeps, moved: number): void {
  if (moved > 0) deps.metrics.deadLettered.inc(moved);
}

function countFaults(deps: PullDeps, counts: Partial<Record<FaultKind, number>>): void {
  for (const [kind, n] of Object.entries(counts)) if (n > 0) deps.metrics.faultsInjected.inc({ kind }, n);
}

/**
 * The Sandbox faults of one receive's answer, recorded in one statement: each message handed out
 * the first time under an added delay is a `delay` event; with probability `earlyExpiryRate` a
 * message's lease ends at half its visibility timeout — and with it the leases of the same
 * correlation id after it in the answer, so an earlier message never comes back behind a later one.
 */
async function injectReceiveFaults(deps: PullDeps, consumerId: string, messages: LeasedMessage[], visibilityMs: number, tools: ConsumerTools): Promise<void> {
  const { delayMs, earlyExpiryRate } = tools.faults;
  const cutFrom = new Set<string>();
  const cut = messages.filter((m) => {
    if (cutFrom.has(m.correlationId)) return true;
    if (earlyExpiryRate > 0 && Math.random() < earlyExpiryRate) cutFrom.add(m.correlationId);
    return cutFrom.has(m.correlationId);
  });
  const delayed = delayMs > 0 ? messages.filter((m) => m.receiveCount === 1).map((m) => m.deliveryId) : [];
  if (cut.length === 0 && delayed.length === 0) return;
  countFaults(
    deps,
    await deps.tools.recordReceiveFaults(consumerId, {
      cut: cut.map((m) => ({ deliveryId: m.deliveryId, generation: m.generation })),
      leaseMs: Math.floor(visibilityMs / 2),
      delayed,
      delayMs,
    }),
  );
}

/**
 * An ack under the Sandbox's duplicate rate: each lease is, with that probability, a lost ack — it
 * answers done but the message comes back once more (ConsumerToolsStore.loseAcks). The lost ones are
 * released before the others are acked, so an earlier message is never released after a later one
 * of its correlation id was acked.
 */
export async function ackWithFaults(
  deps: PullDeps,
  consumerId: string,
  leases: Array<{ deliveryId: string; generation: number }>,
  tools: ConsumerTools | null | undefined,
): Promise<Array<'done' | 'stale'>> {
  const rate = tools?.faults.duplicateRate ?? 0;
  const chosen = rate > 0 ? leases.map(() => Math.random() < rate) : leases.map(() => false);
  const toLose = leases.filter((_, i) => chosen[i]);
  if (toLose.length === 0) return deps.store.ack(consumerId, leases);
  const lost = await deps.tools.loseAcks(consumerId, toLose);
  countFaults(deps, { duplicate: lost.filter((o) => o === 'done').length });
  deps.notifier.notifyLocal(consumerId);
  // A chosen lease that could not be lost (duplicated once already, or no longer current) is acked as usual.
  let k = 0;
  const lostDone = chosen.map((c) => (c ? lost[k++] === 'done' : false));
  const toAck = leases.filter((_, i) => !lostDone[i]);
  const acked = toAck.length > 0 ? await deps.store.ack(consumerId, toAck) : [];
  let a = 0;
  return leases.map((_, i) => (lostDone[i] ? 'done' : (acked[a++] ?? 'stale')));
}

function waitFor(woken: Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
    void woken.then(done);
  });
}

/** A message's envelope, or why there is none and its exact bytes (see messageRecord). */
type RenderedBody = { envelope: Record<string, unknown> } | { envelope: null; envelope_error: UnrenderableReason; body_base64: string };

/** One message of a peek answer (bus.json PeekedMessage): a receive's record without a receipt handle. */
export type PeekedRecord = {
  message_id: string;
  message_type: string;
  correlation_id: string;
  published_at: string;
  receive_count: number;
} & RenderedBody;

/** One message of a receive answer (docs/delivery.md; schemas/openapi/bus.json ReceivedMessage). */
export type ReceivedMessage = { receipt_handle: string } & PeekedRecord;

/**
 * The record of one leased message. Its envelope is the stored bytes parsed (the exact bytes stay
 * stored, invariant E). Bytes that cannot be rendered as an envelope (stored before the gateway refused
 * them, or any future mismatch between what the gateway accepts and what this reads) never fail the
 * receive nor hold back the other messages of it: the message is handed out like any other, with its
 * receipt handle, `envelope: null`, why, and the exact bytes in base64 — counted, and logged without
 * the body.
 */
export function messageRecord(deps: Pick<PullDeps, 'handles' | 'logger' | 'metrics'>, consumerId: string, m: LeasedMessage): ReceivedMessage {
  return {
    receipt_handle: deps.handles.issue({ consumerId, deliveryId: m.deliveryId, generation: m.generation }),
    ...peekRecord(deps, consumerId, m),
  };
}

/** The record of a message without a lease (peek), rendered as a receive renders it. */
export function peekRecord(deps: Pick<PullDeps, 'logger' | 'metrics'>, consumerId: string, m: PeekedMessage): PeekedRecord {
  const head = {
    message_id: m.messageId,
    message_type: m.messageType,
    correlation_id: m.correlationId,
    published_at: m.publishedAt.toISOString(),
    receive_count: m.receiveCount,
  };
  const rendered = renderEnvelope(m.body);
  if (rendered.ok) return { ...head, envelope: rendered.envelope };
  deps.metrics.unrenderable.inc({ reason: rendered.reason });
  deps.logger.warn(
    { consumer_id: consumerId, message_id: m.messageId, reason: rendered.reason, receive_count: m.receiveCount },
    'handed out a message whose stored bytes are not a JSON object (envelope null, bytes in body_base64)',
  );
  return { ...head, envelope: null, envelope_error: rendered.reason, body_base64: m.body.toString('base64') };
}

export type HandleResult =
  { receipt_handle: string; status: 'done' } | { receipt_handle: string; status: 'failed'; code: 'receipt_handle.invalid' | 'receipt_handle.stale' };

/** Acks a batch (under the Sandbox's duplicate rate when the connection has one), per handle. */
export async function acknowledge(
  deps: PullDeps,
  consumerId: string,
  receiptHandles: string[],
  tools: ConsumerTools | null | undefined,
): Promise<HandleResult[]> {
  const results = await settle(deps, consumerId, receiptHandles, (leases) => ackWithFaults(deps, consumerId, leases, tools));
  deps.activity.acked(consumerId, results.filter((r) => r.status === 'done').length);
  return results;
}

/** Nacks a batch: each current lease released after `delayMs`, then this process's long polls of the consumer woken. */
export async function release(deps: PullDeps, consumerId: string, receiptHandles: string[], delayMs: number): Promise<HandleResult[]> {
  const results = await settle(deps, consumerId, receiptHandles, (leases) => deps.store.nack(consumerId, leases, delayMs));
  deps.notifier.notifyLocal(consumerId);
  return results;
}

/** Settles (acks or nacks) a batch, answering per handle like SQS batch calls. */
export async function settle(
  deps: PullDeps,
  consumerId: string,
  receiptHandles: string[],
  run: (leases: Array<{ deliveryId: string; generation: number }>) => Promise<Array<'done' | 'stale'>>,
): Promise<HandleResult[]> {
  const opened = receiptHandles.map((h) => deps.handles.open(consumerId, h));
  const valid = opened.flatMap((lease) => (lease ? [lease] : []));
  const outcomes = valid.length > 0 ? await run(valid) : [];
  let i = 0;
  return receiptHandles.map((receipt_handle, k): HandleResult => {
    if (!opened[k]) return { receipt_handle, status: 'failed', code: 'receipt_handle.invalid' };
    const outcome = outcomes[i++];
    return outcome === 'done' ? { receipt_handle, status: 'done' } : { receipt_handle, status: 'failed', code: 'receipt_handle.stale' };
  });
}
