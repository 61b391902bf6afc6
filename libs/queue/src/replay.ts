import { randomBytes } from 'node:crypto';
import type { ReplayRequest, ReplayResult } from '@bus/contracts';
import { MESSAGES_TOPIC, type Kafka } from '@bus/kafka';
import type { Logger } from '@bus/observability';
import { checkAcceptance, readMessageHeaders } from './acceptance-check';
import type { DeliveryStore } from './delivery-store';

export interface ReplayDeps {
  kafka: Kafka;
  store: DeliveryStore;
  logger: Logger;
  topic?: string;
}

/**
 * The replay primitive (the portal exposes it): re-enqueues for one consumer connection
 * every archived message of its workspace published since `since`, read from Kafka by timestamp up
 * to the end offsets at the start of the replay. Only records whose bytes hash to what Postgres holds
 * as accepted are replayed; a delivery still live is left alone (invariant D).
 */
export async function replayToConsumer(deps: ReplayDeps, req: ReplayRequest): Promise<ReplayResult> {
  const topic = deps.topic ?? MESSAGES_TOPIC;
  const admin = deps.kafka.admin();
  await admin.connect();
  let starts: Array<{ partition: number; offset: string }>;
  let ends: Array<{ partition: number; high: string }>;
  try {
    starts = await admin.fetchTopicOffsetsByTimestamp(topic, req.since.getTime());
    ends = await admin.fetchTopicOffsets(topic);
  } finally {
    await admin.disconnect();
  }
  const endOf = new Map(ends.map((e) => [e.partition, BigInt(e.high)]));
  // Partitions with records to read: start offset (-1 means none at or after the time) below the end.
  const pending = new Map<number, bigint>();
  for (const s of starts) {
    const end = endOf.get(s.partition) ?? 0n;
    const start = BigInt(s.offset);
    if (start >= 0n && start < end) pending.set(s.partition, start);
  }
  const startOf = new Map(pending);
  const result: ReplayResult = { scanned: 0, replayed: 0, skipped: 0 };
  if (pending.size === 0) return result;

  const consumer = deps.kafka.consumer({ groupId: `bus.replay.${req.consumerId}.${randomBytes(4).toString('hex')}`, maxWaitTimeInMs: 250 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      // kafkajs does not start a consumer again after a non-retriable crash: the job fails (and can be
      // asked for again) instead of waiting for ever.
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (!payload.restart) reject(payload.error);
      });
      consumer
        .run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          // Offsets are resolved by hand as records are passed: an unresolved batch would be fetched
          // again and again, so a replay whose range spans more than one fetch never ended.
          eachBatch: async ({ batch, heartbeat, isRunning, isStale, resolveOffset }) => {
            const end = endOf.get(batch.partition) ?? 0n;
            for (const record of batch.messages) {
              if (!isRunning() || isStale() || !pending.has(batch.partition)) break;
              if (BigInt(record.offset) >= end) {
                pending.delete(batch.partition);
                break;
              }
              resolveOffset(record.offset);
              // Before the seek applies, the consumer may read from the start: older records are not replayed.
              if (BigInt(record.offset) < (startOf.get(batch.partition) ?? 0n)) continue;
              await replayRecord(deps, req, record, batch.partition, result);
              if (BigInt(record.offset) + 1n >= end) pending.delete(batch.partition);
              await heartbeat();
            }
            if (pending.size === 0) resolve();
          },
        })
        .then(() => {
          for (const [partition, offset] of pending) consumer.seek({ topic, partition, offset: offset.toString() });
          // Partitions the consumer was not assigned or that hold nothing more are already done.
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  deps.logger.info({ ...req, since: req.since.toISOString(), ...result }, 'replay finished');
  return result;
}

async function replayRecord(
  deps: ReplayDeps,
  req: ReplayRequest,
  record: { offset: string; value: Buffer | null; headers?: import('kafkajs').IHeaders },
  partition: number,
  result: ReplayResult,
): Promise<void> {
  const headers = readMessageHeaders(record.headers);
  if (headers === null || headers.workspace_id !== req.workspaceId) return;
  result.scanned++;
  const check = await checkAcceptance(deps.store, { headers, value: record.value, partition, offset: record.offset });
  if (!check.accepted) {
    result.skipped++;
    return;
  }
  if (await deps.store.replay(check.message, req.consumerId)) result.replayed++;
}
