import { randomUUID } from 'node:crypto';
import type { Knex } from '@bus/db';
import { useTestDatabase } from '@bus/fixtures';
import { eventually } from '@bus/testing';
import { KnexDeliveryStore } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { KnexQueueStore, type LeasedMessage } from './queue-store';
import { lockStoriesOfDeliveries } from './story-lock';

/**
 * The story locks on the real Postgres: one consumer's write of a story (an ack) leaves the other
 * consumers' acks of the same story free, and still keeps that consumer's own next ack and an enqueue
 * of the story waiting until it commits.
 */

const LONG_MS = 120_000;
const database = useTestDatabase({ applicationName: 'queue-story-lock', poolMax: 6 });
let db: Knex;
let deliveries: KnexDeliveryStore;
let queue: KnexQueueStore;

beforeAll(() => {
  db = database.db;
  deliveries = KnexDeliveryStore.create(db);
  queue = KnexQueueStore.create(db);
});

const handle = (m: LeasedMessage) => ({ deliveryId: m.deliveryId, generation: m.generation });

/** Backends of this database waiting for an advisory lock. */
async function waitingForStoryLocks(): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ n: number }> }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`,
  );
  return rows[0]!.n;
}

/** One story of one message, received by both consumers of its workspace. */
async function storyReceivedByTwo(): Promise<{ workspaceId: string; story: string; a: string; b: string; leasedA: LeasedMessage; leasedB: LeasedMessage }> {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }, { kind: 'consumer' }] });
  const [a, b] = tenant.connectionIds as [string, string];
  const story = `story-${randomUUID()}`;
  await deliveries.write({ enqueue: [messageToEnqueue(tenant.workspaceId, story)], quarantine: [] });
  const [leasedA] = (await queue.receive(a, 10, LONG_MS)).messages;
  const [leasedB] = (await queue.receive(b, 10, LONG_MS)).messages;
  return { workspaceId: tenant.workspaceId, story, a, b, leasedA: leasedA!, leasedB: leasedB! };
}

it("leaves another consumer's ack of the same story free while one consumer's ack holds its locks", async () => {
  const { a, b, leasedA, leasedB } = await storyReceivedByTwo();
  const trx = await db.transaction();
  try {
    await lockStoriesOfDeliveries(trx, a, [leasedA.deliveryId]);
    // Would wait for the open transaction if the story's lock were taken exclusive by every ack.
    expect(await queue.ack(b, [handle(leasedB)])).toEqual(['done']);
  } finally {
    await trx.rollback();
  }
  expect(await queue.ack(a, [handle(leasedA)])).toEqual(['done']);
});

it("keeps the same consumer's next ack of the story and an enqueue of the story waiting until the holder commits", async () => {
  const { workspaceId, story, a, leasedA } = await storyReceivedByTwo();
  const trx = await db.transaction();
  let settled = false;
  let ack: Promise<unknown> | undefined;
  let enqueue: Promise<unknown> | undefined;
  try {
    await lockStoriesOfDeliveries(trx, a, [leasedA.deliveryId]);
    ack = queue.ack(a, [handle(leasedA)]).finally(() => (settled = true));
    enqueue = deliveries.write({ enqueue: [messageToEnqueue(workspaceId, story)], quarantine: [] }).finally(() => (settled = true));
    await eventually(waitingForStoryLocks, (n) => n === 2, { what: 'the ack and the enqueue waiting for the story locks' });
    expect(settled).toBe(false);
  } finally {
    await trx.commit();
  }
  expect(await ack).toEqual(['done']);
  await enqueue;
  // The story's next message is its head once the first is acked: received next, by either consumer.
  const next = (await queue.receive(a, 10, LONG_MS)).messages;
  expect(next.map((m) => m.correlationId)).toEqual([story]);
});
