import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { createConnectionUse } from '@bus/identity';
import { uncountedActivity, useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { createMetricsRegistry } from '@bus/observability';
import { seededRandom } from '@bus/testing';
import { createPgQueueNotifier, type QueueNotifier } from './notifier';
import { createPullMetrics, receive, settle, type PullDeps } from './pull';
import { KnexDeliveryStore, KnexQueueStore } from '@bus/queue';
import { createReceiptHandles } from './receipt';

/**
 * The order checker of invariant C, on the real Postgres: many messages on many correlation
 * ids, received in random batch sizes with random acks, nacks (with and without delay) and leases left
 * to expire. After every receive it checks, exactly, that each correlation id's messages come as a run
 * in publish order whose predecessors are all acked; at the end, that every message was acked.
 */
const MESSAGES = Number(process.env.ORDER_CHECK_MESSAGES ?? 5_000);
const GROUPS = 50;
const workspaceId = 'worderchecks2';
const consumer = 'corderconsum2';

const database = useTestDatabase({ applicationName: 'order-check', poolMax: 10 });
let db: Knex;
let notifier: QueueNotifier;
let deps: PullDeps;

beforeAll(async () => {
  db = database.db;
  await database.tenancy.tenant({ workspaceId, connections: [{ id: consumer, kind: 'consumer' }] });
  notifier = createPgQueueNotifier({ url: database.url, logger: pino({ level: 'silent' }) });
  await notifier.start();
  deps = {
    store: KnexQueueStore.create(db),
    tools: KnexQueueStore.create(db),
    notifier,
    handles: createReceiptHandles(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    metrics: createPullMetrics(createMetricsRegistry({ defaultMetrics: false })),
    activity: uncountedActivity,
    connectionUse: createConnectionUse({ db, logger: pino({ level: 'silent' }) }),
  };
}, 30_000);

database.beforeDrop(async () => {
  await notifier?.stop();
});

it(`keeps FIFO per correlation id over ${MESSAGES} messages on ${GROUPS} correlation ids with random nacks, delays and lease expiries`, async () => {
  const seed = Number(process.env.ORDER_CHECK_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  const store = KnexDeliveryStore.create(db);
  // message id → (group, index within group), in publish order per group.
  const position = new Map<string, { group: number; index: number }>();
  const perGroup = Array.from({ length: GROUPS }, () => 0);
  for (let i = 0; i < MESSAGES; i++) {
    const group = Math.floor(random() * GROUPS);
    const messageId = randomUUID();
    position.set(messageId, { group, index: perGroup[group]! });
    perGroup[group]! += 1;
    await store.enqueue({
      workspaceId,
      messageId,
      body: Buffer.from(JSON.stringify({ group, index: perGroup[group]! - 1 })),
      messageType: 'telling.exposed',
      correlationId: `g-${group}`,
      publishedAt: new Date(),
      kafkaPartition: 0,
      kafkaOffset: String(i),
      traceparent: null,
    });
  }

  // acked[g] = how many of group g's messages are acked; FIFO means they are acked as a prefix.
  const ackedSet = Array.from({ length: GROUPS }, () => new Set<number>());
  const violations: string[] = [];
  let receives = 0;
  let totalAcked = 0;
  const deadline = Date.now() + 150_000;
  while (totalAcked < MESSAGES && Date.now() < deadline) {
    const batch = await receive(deps, consumer, {
      maxMessages: 1 + Math.floor(random() * 10),
      waitMs: 300,
      visibilityMs: 150 + Math.floor(random() * 250),
    });
    receives++;
    // The check: per group, every message handed out has each earlier one acked or ahead of it in
    // this very batch (a run, in order). A consumer may ack a run's later message before an earlier
    // one, so a run may skip acked messages.
    const inBatch = Array.from({ length: GROUPS }, () => new Set<number>());
    for (const m of batch) {
      const p = position.get(m.messageId)!;
      for (let j = 0; j < p.index; j++) {
        if (!ackedSet[p.group]!.has(j) && !inBatch[p.group]!.has(j)) {
          violations.push(`seed ${seed}: group ${p.group} message ${p.index} handed out while ${j} is un-acked`);
          break;
        }
      }
      inBatch[p.group]!.add(p.index);
    }
    // Random fates, in random order within the batch.
    const order = batch.map((m) => ({ m, r: random() })).sort((x, y) => x.r - y.r);
    for (const { m } of order) {
      const fate = random();
      const handle = deps.handles.issue({ consumerId: consumer, deliveryId: m.deliveryId, generation: m.generation });
      if (fate < 0.7) {
        const [result] = await settle(deps, consumer, [handle], (l) => deps.store.ack(consumer, l));
        if (result?.status === 'done') {
          const p = position.get(m.messageId)!;
          ackedSet[p.group]!.add(p.index);
          totalAcked++;
        }
      } else if (fate < 0.85) {
        await settle(deps, consumer, [handle], (l) => deps.store.nack(consumer, l, random() < 0.5 ? 0 : Math.floor(random() * 300)));
      } // else: left to expire
    }
    if (violations.length > 0) break;
  }
  expect(violations).toEqual([]);
  expect(totalAcked).toBe(MESSAGES);
  // Every group was acked as a prefix of its publish order, to the end.
  expect(ackedSet.map((s) => s.size)).toEqual(perGroup);
  const left = await db('deliveries').where({ consumer_id: consumer }).whereNot({ state: 'acked' }).count<{ n: string }[]>({ n: '*' });
  expect(Number(left[0]!.n)).toBe(0);
  expect(receives).toBeGreaterThan(0);
}, 200_000);
