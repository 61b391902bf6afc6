import { SpanKind, trace, type Span } from '@opentelemetry/api';
import type { IHeaders } from 'kafkajs';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { MessageHeaders } from '@bus/kafka';
import { inSpan, publishTraceContext, type Logger } from '@bus/observability';
import { checkAcceptance, readMessageHeaders, type RefusalReason } from './acceptance-check';
import type { DeliveryStore } from './delivery-store';

/** One record of bus.messages.v1 as kafkajs hands it over. */
export interface MessageRecord {
  topic: string;
  partition: number;
  offset: string;
  value: Buffer | null;
  headers?: IHeaders;
}

export interface RecordEnqueuerDeps {
  store: DeliveryStore;
  logger: Logger;
  metrics: Registry;
  /** How long to wait for the gateway's commit of a record's acceptance before quarantining it. */
  acceptanceWaitMs: number;
  /**
   * First re-check interval; doubles up to 500 ms. Short, because the usual case is the gateway's
   * commit a few milliseconds behind its Kafka ack (delivery often reads before it lands), and the
   * first wait is what a waiting long poll pays.
   */
  recheckMs?: number;
}

export type EnqueueOutcome = 'enqueued' | 'quarantined';

/**
 * Invariant A (checkAcceptance): a record is enqueued only when Postgres holds its acceptance with the
 * content hash of the record's own bytes. The gateway commits Postgres right after the Kafka ack, so
 * an acceptance may be in flight: the record waits up to `acceptanceWaitMs`, re-checking, and is
 * quarantined (row, log line, counter) when it never comes — an operator can redrive it once the
 * acceptance is there (redrive.ts). Unreadable headers, a value that is not JSON or a hash mismatch
 * are quarantined without waiting longer. A record of a workspace this database does not know is only
 * counted.
 */
export function createRecordEnqueuer(deps: RecordEnqueuerDeps): (record: MessageRecord) => Promise<EnqueueOutcome> {
  const quarantined = new Counter({
    name: 'bus_delivery_quarantined_total',
    help: 'Kafka records delivery refused to enqueue (invariant A), by reason',
    labelNames: ['reason'],
    registers: [deps.metrics],
  });
  const enqueued = new Counter({
    name: 'bus_delivery_enqueued_total',
    help: 'Deliveries created (one per consumer connection and message)',
    registers: [deps.metrics],
  });
  const lag = new Histogram({
    name: 'bus_delivery_lag_seconds',
    help: 'From the gateway accepting a message to its deliveries being committed',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [deps.metrics],
  });
  const recheckMs = deps.recheckMs ?? 4;
  // Workspaces this database does not have; a record needs its workspace to exist before it is published.
  const unknownWorkspaces = new Set<string>();
  // Workspaces it has: they are never deleted while the bus runs, so one lookup each is enough.
  const knownWorkspaces = new Set<string>();
  const workspaceKnown = async (workspaceId: string): Promise<boolean> => {
    if (knownWorkspaces.has(workspaceId)) return true;
    if (unknownWorkspaces.has(workspaceId) || !(await deps.store.workspaceExists(workspaceId))) {
      if (unknownWorkspaces.size >= 10_000) unknownWorkspaces.clear();
      unknownWorkspaces.add(workspaceId);
      return false;
    }
    if (knownWorkspaces.size >= 10_000) knownWorkspaces.clear();
    knownWorkspaces.add(workspaceId);
    return true;
  };

  const tracer = trace.getTracer('@bus/delivery');

  const enqueue = async (record: MessageRecord, headers: MessageHeaders | null, span: Span): Promise<EnqueueOutcome> => {
    const quarantine = async (reason: RefusalReason): Promise<EnqueueOutcome> => {
      const workspaceId = headers?.workspace_id ?? null;
      const messageId = headers?.message_id ?? null;
      await deps.store.quarantine({ topic: record.topic, partition: record.partition, offset: record.offset, workspaceId, messageId, reason, headers: stringHeaders(record.headers), value: record.value });
      quarantined.inc({ reason });
      span.setAttribute('bus.quarantine.reason', reason);
      deps.logger.warn(
        { topic: record.topic, partition: record.partition, offset: record.offset, workspace_id: workspaceId, message_id: messageId, reason },
        'delivery quarantined a Kafka record (invariant A)',
      );
      return 'quarantined';
    };

    if (headers === null) return quarantine('headers.unreadable');
    if (!(await workspaceKnown(headers.workspace_id))) {
      // Another environment's (or a dropped test database's) record on a shared topic: no commit can
      // ever make it acceptable here. Counted, not stored, so a shared topic's history costs nothing.
      quarantined.inc({ reason: 'workspace.unknown' });
      span.setAttribute('bus.quarantine.reason', 'workspace.unknown');
      return 'quarantined';
    }
    const check = await checkAcceptance(
      deps.store,
      { headers, value: record.value, partition: record.partition, offset: record.offset },
      { waitMs: deps.acceptanceWaitMs, recheckMs },
    );
    if (!check.accepted) return quarantine(check.reason);

    const consumers = await deps.store.enqueue(check.message);
    enqueued.inc(consumers.length);
    // publishedAt is the gateway's acceptance time.
    lag.observe(Math.max(0, (Date.now() - check.message.publishedAt.getTime()) / 1000));
    return 'enqueued';
  };

  return async (record) => {
    const headers = readMessageHeaders(record.headers);
    // One span per record, a child of the publish that produced it (the traceparent header), so a
    // trace runs publish → enqueue. Bounded attributes: never the body or the other headers.
    const span = tracer.startSpan(
      'delivery enqueue',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.destination.name': record.topic,
          'messaging.destination.partition.id': String(record.partition),
          'messaging.kafka.offset': Number(record.offset),
          ...(headers ? { 'messaging.message.id': headers.message_id, 'bus.workspace_id': headers.workspace_id } : {}),
        },
      },
      publishTraceContext(headers?.traceparent ?? null),
    );
    return inSpan(span, async () => {
      const outcome = await enqueue(record, headers, span);
      span.setAttribute('bus.delivery.outcome', outcome);
      return outcome;
    });
  };
}

function stringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined && value !== null) out[key] = Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
  }
  return out;
}
