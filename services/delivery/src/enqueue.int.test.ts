/**
 * Delivery's batch enqueue (createBatchEnqueuer) on the real Postgres, fed records as kafkajs hands
 * them over: what one batch costs in statements, and FIFO per correlation id while a record waits for
 * its acceptance.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Registry } from 'prom-client';
import { uncountedActivity, useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { encodeMessageHeaders, messageKey } from '@bus/kafka';
import { createMetricsRegistry } from '@bus/observability';
import { som } from '@bus/schemas';
import { contentHash } from '@bus/som';
import { eventually } from '@bus/testing';
import { KnexDeliveryStore } from '@bus/queue';
import { createBatchEnqueuer, type BatchEnqueuer, type MessageRecord } from './enqueue';

const workspaceId = 'wenqueuetest2';
const producerId = 'cenqueueprod2';
const consumers = ['cenqueuecona2', 'cenqueueconb2'];

const database = useTestDatabase({ applicationName: 'enqueue-test', poolMax: 4 });
let db: Knex;
let organisationId: string;

beforeAll(async () => {
  db = database.db;
  organisationId = (await database.tenancy.organisation()).id;
  await provisionWorkspace(workspaceId, producerId, consumers);
}, 30_000);

async function provisionWorkspace(id: string, producer: string, consumerIds: string[]): Promise<void> {
  const tenancy = database.tenancy;
  await tenancy.workspace({ id, organisation_id: organisationId });
  const app = await tenancy.app({ workspace_id: id });
  for (const [connectionId, kind] of [[producer, 'producer'] as const, ...consumerIds.map((c) => [c, 'consumer'] as const)]) {
    await tenancy.connection({ id: connectionId, app_id: app.id, kind });
  }
}

function enqueuer(
  acceptanceWaitMs: number,
  { unknownWorkspaceTtlMs, metrics = createMetricsRegistry({ defaultMetrics: false }) }: { unknownWorkspaceTtlMs?: number; metrics?: Registry } = {},
): BatchEnqueuer {
  return createBatchEnqueuer({
    store: KnexDeliveryStore.create(db),
    logger: pino({ level: 'silent' }),
    metrics,
    acceptanceWaitMs,
    activity: uncountedActivity,
    ...(unknownWorkspaceTtlMs === undefined ? {} : { unknownWorkspaceTtlMs }),
  });
}

type Message = Record<string, unknown> & { message_id: string; correlation_id: string };
function started(correlationId: string): Message {
  return {
    ...(som.examples['telling.started'] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: correlationId,
    occurred_at: new Date().toISOString(),
  };
}

let offset = 0;
/** The record the gateway produces for `message` in `workspace`, as kafkajs hands it to delivery. */
function recordOf(message: Message, workspace = workspaceId, partition = 0): MessageRecord {
  return {
    topic: 'bus.messages.v1',
    partition,
    offset: String(offset++),
    key: Buffer.from(messageKey(workspace, message.correlation_id)),
    value: Buffer.from(JSON.stringify(message)),
    headers: encodeMessageHeaders({
      workspace_id: workspace,
      message_id: message.message_id,
      message_type: 'telling.started',
      family: 'telling',
      producer_connection_id: producerId,
      content_hash: contentHash(message),
      accepted_at: new Date().toISOString(),
      traceparent: null,
    }),
  };
}

/** The gateway's acceptance row for `message`, committed now. */
async function accept(messages: Message[], workspace = workspaceId): Promise<void> {
  await db('accepted_messages').insert(
    messages.map((m) => ({
      workspace_id: workspace,
      message_id: m.message_id,
      content_hash: contentHash(m),
      message_type: 'telling.started',
      correlation_id: m.correlation_id,
      producer_connection_id: producerId,
      accepted_at: new Date(),
      kafka_partition: 0,
      kafka_offset: 0,
    })),
  );
}

/** Delivery ids (the FIFO sequence) of `consumer`, by message id. */
async function deliveryIds(consumer: string, messages: Message[]): Promise<Map<string, number>> {
  const rows = (await db('deliveries')
    .where({ consumer_id: consumer })
    .whereIn(
      'message_id',
      messages.map((m) => m.message_id),
    )
    .select('id', 'message_id')) as Array<{ id: string; message_id: string }>;
  return new Map(rows.map((r) => [r.message_id, Number(r.id)]));
}

/** What `run` resolves with, and how many statements it sent to Postgres meanwhile. */
async function countingStatements<T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  let statements = 0;
  const count = () => {
    statements += 1;
  };
  db.on('query', count);
  try {
    return { result: await run(), statements };
  } finally {
    db.off('query', count);
  }
}

/** Each consumer's deliveries of `messages` exist and their ids (the FIFO sequence) follow the array's order. */
async function expectEnqueuedInOrder(messages: Message[]): Promise<void> {
  for (const consumer of consumers) {
    const ids = await deliveryIds(consumer, messages);
    const inKafkaOrder = messages.map((m) => ids.get(m.message_id));
    expect(inKafkaOrder.every((id) => id !== undefined)).toBe(true);
    expect([...inKafkaOrder].sort((a, b) => a! - b!)).toEqual(inKafkaOrder);
  }
}

describe('delivery enqueues a Kafka batch at once', () => {
  it('writes 50 accepted records in a handful of statements, whatever the batch length, each consumer in Kafka order', async () => {
    const messages = Array.from({ length: 50 }, (_, i) => started(`batch-${i % 10}-${randomUUID().slice(0, 4)}`));
    await accept(messages);
    const handle = enqueuer(5_000);
    const { result: outcomes, statements } = await countingStatements(() => handle(messages.map((m) => recordOf(m))));
    expect(outcomes).toEqual(Array(50).fill('enqueued'));
    // Workspace lookup, acceptances, and one transaction: BEGIN, the stories' locks, the one enqueue
    // statement (messages, deliveries with their head markers, their NOTIFYs), COMMIT.
    expect(statements).toBeLessThanOrEqual(6);
    await expectEnqueuedInOrder(messages);
  });

  it('enqueues a record that a batch holds twice (a producer retry) once per consumer, at its first place', async () => {
    const story = `twice-${randomUUID()}`;
    const [first, second] = [started(story), started(story)];
    await accept([first, second]);
    const outcomes = await enqueuer(5_000)([recordOf(first), recordOf(second), recordOf(first)]);
    expect(outcomes).toEqual(['enqueued', 'enqueued', 'enqueued']);
    for (const consumer of consumers) {
      const rows = (await db('deliveries').where({ consumer_id: consumer, correlation_id: story }).orderBy('id').select('message_id', 'is_head')) as Array<{
        message_id: string;
        is_head: boolean;
      }>;
      expect(rows).toEqual([
        { message_id: first.message_id, is_head: true },
        { message_id: second.message_id, is_head: false },
      ]);
    }
    expect(await db('messages').where({ message_id: first.message_id })).toHaveLength(1);
  });

  it("stores every record's exact bytes, whatever their lengths, side by side in one batch", async () => {
    // Bodies of very different lengths (the longest near the 240,000-byte limit), multi-byte characters
    // and escapes, side by side in one batch.
    const messages = [1, 0, 5_000, 3, 23_000].map((n) => ({ ...started(`bytes-${randomUUID()}`), padding: 'é\u0000"'.repeat(n) }));
    await accept(messages);
    const records = messages.map((m) => recordOf(m));
    expect(await enqueuer(5_000)(records)).toEqual(Array(messages.length).fill('enqueued'));
    const stored = (await db('messages')
      .whereIn(
        'message_id',
        messages.map((m) => m.message_id),
      )
      .select('message_id', 'body')) as Array<{ message_id: string; body: Buffer }>;
    const bodies = new Map(stored.map((r) => [r.message_id, r.body]));
    for (const [i, m] of messages.entries()) expect(Buffer.compare(bodies.get(m.message_id) as Buffer, records[i]!.value as Buffer)).toBe(0);
  });

  it('lets a record waiting for its acceptance hold back the later records of its correlation id only, then enqueues them in order', async () => {
    const x = `x-${randomUUID()}`;
    const [first, other, second] = [started(x), started(`y-${randomUUID()}`), started(x)];
    await accept([other, second]);
    const handling = enqueuer(20_000)([recordOf(first), recordOf(other), recordOf(second)]);
    // The other correlation id is not held back by the wait...
    await eventually(
      () => deliveryIds(consumers[0]!, [other]),
      (ids) => ids.size === 1,
      { what: 'the other correlation id enqueued' },
    );
    // ...but the record after the waiting one in its own correlation id is.
    expect((await deliveryIds(consumers[0]!, [first, second])).size).toBe(0);
    await accept([first]);
    expect(await handling).toEqual(['enqueued', 'enqueued', 'enqueued']);
    for (const consumer of consumers) {
      const ids = await deliveryIds(consumer, [first, other, second]);
      expect(ids.get(first.message_id)).toBeLessThan(ids.get(second.message_id)!);
      expect(ids.get(other.message_id)).toBeLessThan(ids.get(first.message_id)!);
    }
  }, 30_000);

  it('quarantines a record whose acceptance never came, and then enqueues the later record of its correlation id', async () => {
    const x = `x-${randomUUID()}`;
    const [never, after] = [started(x), started(x)];
    await accept([after]);
    expect(await enqueuer(300)([recordOf(never), recordOf(after)])).toEqual(['quarantined', 'enqueued']);
    expect(await db('quarantined_records').where({ message_id: never.message_id }).pluck('reason')).toEqual(['acceptance.missing']);
    expect((await deliveryIds(consumers[0]!, [never, after])).size).toBe(1);
  }, 30_000);

  it('quarantines a value that is not JSON and has no acceptance at a re-check, not after the wait, then enqueues the later record of its correlation id', async () => {
    const x = `x-${randomUUID()}`;
    const [garbled, after] = [started(x), started(x)];
    await accept([after]);
    const unreadable = { ...recordOf(garbled), value: Buffer.from(`${JSON.stringify(garbled)} trailing`) };
    // A wait longer than this test may run: the value must be refused at a re-check, not when the wait runs out.
    expect(await enqueuer(120_000)([unreadable, recordOf(after)])).toEqual(['quarantined', 'enqueued']);
    expect(await db('quarantined_records').where({ message_id: garbled.message_id }).pluck('reason')).toEqual(['value.unreadable']);
    expect((await deliveryIds(consumers[0]!, [after])).size).toBe(1);
  }, 30_000);

  it('skips a workspace it does not have without storing anything, and delivers its records once it exists', async () => {
    const later = 'wenqueuelate2';
    const message = started(`l-${randomUUID()}`);
    const handle = enqueuer(1_000, { unknownWorkspaceTtlMs: 50 });
    const record = recordOf(message, later);
    expect(await handle([record])).toEqual(['quarantined']);
    expect(await db('quarantined_records').where({ message_id: message.message_id })).toEqual([]);
    await provisionWorkspace(later, 'cenqueueprod3', ['cenqueuecond3']);
    await accept([message], later);
    await eventually(
      () => handle([record]),
      (outcomes) => outcomes[0] === 'enqueued',
      { what: 'the new workspace seen' },
    );
    expect((await deliveryIds('cenqueuecond3', [message])).size).toBe(1);
  }, 30_000);

  it('handles partitions side by side, each in statements of its own, answering each as if it were alone', async () => {
    const metrics = createMetricsRegistry({ defaultMetrics: false });
    const handle = enqueuer(5_000, { metrics });
    // The workspace lookup is cached from here on: what follows is acceptances and writes only.
    const warmUp = started(`w-${randomUUID()}`);
    await accept([warmUp]);
    expect(await handle([recordOf(warmUp)])).toEqual(['enqueued']);
    const partitions = [0, 1, 2].map((partition) => Array.from({ length: 10 }, (_, i) => started(`p${partition}-${i % 3}-${randomUUID().slice(0, 4)}`)));
    await accept(partitions.flat());
    // One record of partition 2 whose bytes are not what was accepted: quarantined with its partition's write.
    const altered = recordOf(partitions[2]![9]!, workspaceId, 2);
    altered.value = Buffer.from(JSON.stringify({ ...partitions[2]![9]!, occurred_at: '2020-01-01T00:00:00Z' }));
    const { result: outcomes, statements } = await countingStatements(() =>
      Promise.all(
        partitions.map((messages, partition) => handle(messages.map((m, i) => (partition === 2 && i === 9 ? altered : recordOf(m, workspaceId, partition))))),
      ),
    );
    expect(outcomes).toEqual([Array(10).fill('enqueued'), Array(10).fill('enqueued'), [...Array(9).fill('enqueued'), 'quarantined']]);
    // Each partition: its acceptances and its write's transaction (BEGIN, the stories' locks, the enqueue,
    // COMMIT); the quarantine adds its insert to its partition's transaction.
    expect(statements).toBeLessThanOrEqual(3 * 5 + 1);
    expect(await db('quarantined_records').where({ message_id: partitions[2]![9]!.message_id }).pluck('reason')).toEqual(['acceptance.hash_mismatch']);
    const enqueued = (await metrics.getSingleMetric('bus_delivery_enqueued_total')?.get())?.values[0]?.value;
    expect(enqueued).toBe((1 + 29) * consumers.length);
    for (const messages of partitions) await expectEnqueuedInOrder(messages.filter((m) => m !== partitions[2]![9]));
  });

  it('counts the deliveries a write created, a replayed write none', async () => {
    const store = KnexDeliveryStore.create(db);
    const message = started(`r-${randomUUID()}`);
    await accept([message]);
    const write = () =>
      store.write({
        enqueue: [
          {
            workspaceId,
            messageId: message.message_id,
            body: Buffer.from(JSON.stringify(message)),
            messageType: 'telling.started',
            correlationId: message.correlation_id,
            publishedAt: new Date(),
            kafkaPartition: 0,
            kafkaOffset: String(offset++),
            traceparent: null,
          },
        ],
        quarantine: [],
      });
    expect((await write()).sort()).toEqual([...consumers].sort());
    expect(await write()).toEqual([]);
  });
});
