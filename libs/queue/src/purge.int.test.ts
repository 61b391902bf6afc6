import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { resolveDeadLetter } from './dead-letters';
import { KnexDeliveryStore, type MessageToEnqueue } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { purgeQueue } from './purge';
import { KnexQueueStore, type LeasedMessage } from './queue-store';

/**
 * Purge on the real Postgres: waiting, in-flight, delayed and held-back messages go, dead letters
 * stay, receipt handles of purged messages are stale, and what is enqueued afterwards is received in
 * order per story — also while enqueues, receives and acks race the purge.
 */

const LONG_MS = 120_000;
const database = useTestDatabase({ applicationName: 'queue-purge', poolMax: 8 });
let db: Knex;
let deliveries: KnexDeliveryStore;
let queue: KnexQueueStore;

beforeAll(() => {
  db = database.db;
  deliveries = KnexDeliveryStore.create(db);
  queue = KnexQueueStore.create(db);
});

async function newConsumer(): Promise<{ workspaceId: string; consumer: string }> {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  return { workspaceId: tenant.workspaceId, consumer: tenant.connectionIds[0]! };
}

async function publish(workspaceId: string, stories: string[]): Promise<MessageToEnqueue[]> {
  const batch = stories.map((s) => messageToEnqueue(workspaceId, s));
  await deliveries.write({ enqueue: batch, quarantine: [] });
  return batch;
}

/** Deliveries whose head marker is wrong: on an acked row, on a later row, or missing from the oldest un-acked one. */
async function wrongHeads(consumer: string): Promise<unknown[]> {
  const { rows } = await db.raw(
    `SELECT d.id, d.correlation_id, d.is_head FROM deliveries d
      WHERE d.consumer_id = ? AND d.is_head <> (d.acked_at IS NULL AND d.id = (
        SELECT min(x.id) FROM deliveries x WHERE x.consumer_id = d.consumer_id AND x.correlation_id = d.correlation_id AND x.acked_at IS NULL))`,
    [consumer],
  );
  return rows as unknown[];
}

/** Receives and acks until nothing is receivable, one message at a time per story as it comes: the ids in receive order. */
async function drain(consumer: string): Promise<string[]> {
  const got: string[] = [];
  for (let round = 0; round < 50; round += 1) {
    const { messages } = await queue.receive(consumer, 10, LONG_MS);
    if (messages.length === 0) return got;
    got.push(...messages.map((m) => m.messageId));
    expect(await queue.ack(consumer, messages.map(handle))).toEqual(messages.map(() => 'done'));
  }
  throw new Error('the queue did not drain');
}

const handle = (m: LeasedMessage) => ({ deliveryId: m.deliveryId, generation: m.generation });

async function unacked(consumer: string): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ n: number }> }>(`SELECT count(*)::int AS n FROM deliveries WHERE consumer_id = ? AND acked_at IS NULL`, [
    consumer,
  ]);
  return rows[0]!.n;
}

it('removes waiting, in-flight, delayed and held-back messages, keeps dead letters, and receives what comes after in order', async () => {
  const { workspaceId, consumer } = await newConsumer();
  // Story a: leased, with one waiting behind it; b: the same; c: nacked, waiting; d: nacked with a
  // delay; e: a dead letter with a message waiting behind it.
  await publish(workspaceId, ['e']);
  const first = await queue.receive(consumer, 1, 1);
  expect(first.messages.map((m) => m.correlationId)).toEqual(['e']);
  await db.raw(`UPDATE deliveries SET visible_at = now() - interval '1 second' WHERE consumer_id = ?`, [consumer]);
  expect(await queue.deadLetterDue(consumer, 1)).toBe(1);
  await publish(workspaceId, ['e', 'a', 'a', 'b', 'c', 'd']);
  const leased = await queue.receive(consumer, 10, LONG_MS);
  expect(leased.messages.map((m) => m.correlationId).sort()).toEqual(['a', 'a', 'b', 'c', 'd']);
  const d = leased.messages.find((m) => m.correlationId === 'd')!;
  expect(await queue.nack(consumer, [handle(d)], LONG_MS)).toEqual(['done']);
  const c = leased.messages.find((m) => m.correlationId === 'c')!;
  expect(await queue.nack(consumer, [handle(c)], 0)).toEqual(['done']);
  await publish(workspaceId, ['b', 'a']);

  expect(await purgeQueue(db, consumer)).toBe(8);

  // Only the dead letter is left, still its story's head; the purged receipt handles are stale.
  expect(await unacked(consumer)).toBe(1);
  expect(await wrongHeads(consumer)).toEqual([]);
  const stillLeased = leased.messages.filter((m) => m.correlationId === 'a' || m.correlationId === 'b');
  expect(await queue.ack(consumer, stillLeased.map(handle))).toEqual(stillLeased.map(() => 'stale'));
  expect(await queue.nack(consumer, stillLeased.map(handle), 0)).toEqual(stillLeased.map(() => 'stale'));
  expect(await queue.extend(consumer, stillLeased.map(handle), LONG_MS)).toEqual(stillLeased.map(() => 'stale'));
  expect((await queue.receive(consumer, 10, LONG_MS)).messages).toEqual([]);
  const letters = await db('dead_letters').where({ consumer_id: consumer }).whereNull('resolved_at').select('id');
  expect(letters).toHaveLength(1);

  // What is published afterwards is received, in order per story; story e's new messages wait behind
  // its dead letter until it is redriven.
  const after = await publish(workspaceId, ['a', 'b', 'a', 'e', 'c', 'b', 'd', 'e']);
  expect(await wrongHeads(consumer)).toEqual([]);
  const received = await drain(consumer);
  const expectedFirst = after.filter((m) => m.correlationId !== 'e').map((m) => m.messageId);
  expect(received.slice().sort()).toEqual(expectedFirst.slice().sort());
  for (const story of ['a', 'b', 'c', 'd']) {
    const order = after.filter((m) => m.correlationId === story).map((m) => m.messageId);
    expect(received.filter((id) => order.includes(id))).toEqual(order);
  }
  await resolveDeadLetter(db, consumer, String(letters[0]!.id), 'redriven');
  const letterDelivery = await db('deliveries').where({ consumer_id: consumer, correlation_id: 'e' }).orderBy('id').first('message_id');
  expect(await drain(consumer)).toEqual([letterDelivery!.message_id, ...after.filter((m) => m.correlationId === 'e').map((m) => m.messageId)]);
  expect(await unacked(consumer)).toBe(0);
});

it('purges every story when they take more than one batch, and an empty queue purges nothing', async () => {
  const { workspaceId, consumer } = await newConsumer();
  expect(await purgeQueue(db, consumer, { storiesPerBatch: 2, rowsPerStatement: 5_000 })).toBe(0);
  await publish(workspaceId, ['s1', 's2', 's3', 's4', 's5', 's1', 's3']);
  expect(await purgeQueue(db, consumer, { storiesPerBatch: 2, rowsPerStatement: 5_000 })).toBe(7);
  expect(await unacked(consumer)).toBe(0);
  const later = await publish(workspaceId, ['s3', 's1']);
  expect(await drain(consumer)).toEqual(later.map((m) => m.messageId));
});

it('settles a story longer than one statement may take pass by pass, each statement within its share, and loses nothing after it', async () => {
  const { workspaceId, consumer } = await newConsumer();
  // Story dl: a dead letter with 7 behind it; long: 12 with its head leased; short: 2.
  await publish(workspaceId, ['dl']);
  expect((await queue.receive(consumer, 1, 1)).messages).toHaveLength(1);
  await db.raw(`UPDATE deliveries SET visible_at = now() - interval '1 second' WHERE consumer_id = ?`, [consumer]);
  expect(await queue.deadLetterDue(consumer, 1)).toBe(1);
  await publish(workspaceId, [...Array<string>(7).fill('dl'), ...Array<string>(12).fill('long'), 'short', 'short']);
  const leased = await queue.receive(consumer, 1, LONG_MS);
  expect(leased.messages.map((m) => m.correlationId)).toEqual(['long']);

  const settledByStatement: number[] = [];
  const record = (response: { rows?: Array<{ purged?: number; unfinished?: unknown }> }) => {
    const row = response.rows?.[0];
    if (row && typeof row.purged === 'number' && row.unfinished !== undefined) settledByStatement.push(row.purged);
  };
  db.on('query-response', record);
  try {
    expect(await purgeQueue(db, consumer, { storiesPerBatch: 2, rowsPerStatement: 4 })).toBe(21);
  } finally {
    db.off('query-response', record);
  }
  // Two stories a batch, 4 rows a statement: 2 a story, so the long story alone needs 6 passes.
  expect(settledByStatement.length).toBeGreaterThanOrEqual(6);
  expect(Math.max(...settledByStatement)).toBeLessThanOrEqual(4);
  expect(settledByStatement.reduce((a, b) => a + b, 0)).toBe(21);

  expect(await unacked(consumer)).toBe(1);
  expect(await wrongHeads(consumer)).toEqual([]);
  expect(await queue.ack(consumer, leased.messages.map(handle))).toEqual(['stale']);
  const later = await publish(workspaceId, ['long', 'short', 'long']);
  const received = await drain(consumer);
  expect(received.slice().sort()).toEqual(later.map((m) => m.messageId).sort());
  expect(received.filter((id) => later[1]!.messageId !== id)).toEqual([later[0]!.messageId, later[2]!.messageId]);
});

it('keeps every head right and loses nothing enqueued after it while enqueues, receives and acks race the purge', async () => {
  const { workspaceId, consumer } = await newConsumer();
  const stories = Array.from({ length: 12 }, (_, i) => `r${i}`);
  await publish(workspaceId, [...stories, ...stories]);
  const racing: MessageToEnqueue[] = [];
  const acker = (async () => {
    for (let i = 0; i < 5; i += 1) {
      const { messages } = await queue.receive(consumer, 5, LONG_MS);
      await queue.ack(consumer, messages.map(handle));
    }
  })();
  const publisher = (async () => {
    for (let i = 0; i < 5; i += 1) racing.push(...(await publish(workspaceId, stories.slice(i, i + 4))));
  })();
  await Promise.all([purgeQueue(db, consumer, { storiesPerBatch: 3, rowsPerStatement: 5 }), acker, publisher]);
  expect(await wrongHeads(consumer)).toEqual([]);

  // Whatever of the racing messages the purge did not take is still queued, and everything published
  // once the purge is done is received after it, in order per story.
  const after = await publish(workspaceId, [...stories, ...stories]);
  const received = await drain(consumer);
  expect(received.filter((id) => after.some((m) => m.messageId === id)).sort()).toEqual(after.map((m) => m.messageId).sort());
  for (const story of stories) {
    const order = [...racing, ...after].filter((m) => m.correlationId === story).map((m) => m.messageId);
    expect(received.filter((id) => order.includes(id))).toEqual(order.filter((id) => received.includes(id)));
  }
  expect(await unacked(consumer)).toBe(0);
});
