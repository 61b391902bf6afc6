import { randomBytes, randomUUID } from 'node:crypto';
import pino from 'pino';
import { createConnectionUse } from '@bus/identity';
import { uncountedActivity, useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { createMetricsRegistry } from '@bus/observability';
import { eventually } from '@bus/testing';
import { createPgQueueNotifier, type QueueNotifier } from './notifier';
import { createPullMetrics, messageRecord, receive, settle, type PullDeps } from './pull';
import { KnexDeliveryStore, KnexQueueStore, messageToEnqueue, type QueueStore, type ReceiveGate } from '@bus/queue';
import { createReceiptHandles } from './receipt';

const workspaceId = 'wpullapitest2';
const [a, b] = ['cpullconsuma2', 'cpullconsumb2'] as const;

const database = useTestDatabase({ applicationName: 'pull-test', poolMax: 20 });
let db: Knex;
let notifier: QueueNotifier;
let deps: PullDeps;
let deliveries: KnexDeliveryStore;

beforeAll(async () => {
  db = database.db;
  await database.tenancy.tenant({ workspaceId, connections: [a, b].map((id) => ({ id, kind: 'consumer' as const })) });
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
  deliveries = KnexDeliveryStore.create(db);
}, 30_000);

database.beforeDrop(async () => {
  await notifier?.stop();
});

/** Enqueues a message to both consumers through delivery's own store (the same transaction and NOTIFY). */
async function enqueue(correlationId: string): Promise<{ messageId: string; raw: Buffer }> {
  const messageId = randomUUID();
  const raw = Buffer.from(`{ "message_id": "${messageId}",   "correlation_id": "${correlationId}" }`, 'utf8');
  await deliveries.enqueue(messageToEnqueue(workspaceId, correlationId, { messageId, body: raw }));
  return { messageId, raw };
}

const get = (consumer: string, max = 10, visibilityMs = 30_000, waitMs = 0, pull: PullDeps = deps) =>
  receive(pull, consumer, { maxMessages: max, waitMs, visibilityMs });
const handleOf = (consumer: string, m: { deliveryId: string; generation: number }) => deps.handles.issue({ consumerId: consumer, ...m });
const ack = (consumer: string, handles: string[]) => settle(deps, consumer, handles, (l) => deps.store.ack(consumer, l));
const nack = (consumer: string, handles: string[], delayMs = 0) => settle(deps, consumer, handles, (l) => deps.store.nack(consumer, l, delayMs));

/**
 * The pull deps with a store that counts the long polls gone to wait: a receive that found nothing
 * receivable, not even contended heads, is followed by the wait for a NOTIFY or the next visible time.
 * A test enqueues once the polls it started are waiting, so the NOTIFY is what must wake them.
 */
function countingWaits(): { pull: PullDeps; waiting: () => number } {
  let waiting = 0;
  const store: QueueStore = {
    receive: async (...args) => {
      const result = await deps.store.receive(...args);
      if (result.messages.length === 0 && !result.contended) waiting += 1;
      return result;
    },
    ack: (...args) => deps.store.ack(...args),
    nack: (...args) => deps.store.nack(...args),
    extend: (...args) => deps.store.extend(...args),
  };
  return { pull: { ...deps, store }, waiting: () => waiting };
}

/** Runs `work` and counts the statements it sent to Postgres (each one round trip), BEGIN and COMMIT included. */
async function roundTrips<T>(work: () => Promise<T>): Promise<{ result: T; roundTrips: number }> {
  let statements = 0;
  const count = () => {
    statements += 1;
  };
  db.on('query', count);
  try {
    const result = await work();
    return { result, roundTrips: statements };
  } finally {
    db.off('query', count);
  }
}

/** Drains what is left for `consumer` so each test starts from an empty queue. */
async function drain(consumer: string) {
  await db('deliveries').where({ consumer_id: consumer }).update({ state: 'acked', acked_at: new Date(), is_head: false });
}
afterEach(async () => {
  await drain(a);
  await drain(b);
});

describe('the pull API queues on the real Postgres', () => {
  it('hands a message to each consumer with its envelope parsed, acks it once, and refuses foreign or stale handles', async () => {
    const correlation = `c-${randomUUID()}`;
    const { messageId, raw } = await enqueue(correlation);
    const [got] = await get(a);
    expect(got).toBeDefined();
    const record = messageRecord(deps, a, got!);
    expect(record).toMatchObject({ message_id: messageId, message_type: 'telling.started', correlation_id: correlation, receive_count: 1 });
    expect(record.envelope).toEqual(JSON.parse(raw.toString('utf8')));
    expect(Buffer.compare(got!.body, raw)).toBe(0);
    expect((await get(b)).map((m) => m.messageId)).toEqual([messageId]);

    // Consumer b cannot ack a's message with a's handle.
    expect(await ack(b, [record.receipt_handle])).toEqual([{ receipt_handle: record.receipt_handle, status: 'failed', code: 'receipt_handle.invalid' }]);
    expect(await ack(a, [record.receipt_handle, 'garbage'])).toEqual([
      { receipt_handle: record.receipt_handle, status: 'done' },
      { receipt_handle: 'garbage', status: 'failed', code: 'receipt_handle.invalid' },
    ]);
    expect(await ack(a, [record.receipt_handle])).toEqual([{ receipt_handle: record.receipt_handle, status: 'failed', code: 'receipt_handle.stale' }]);
    expect(await get(a)).toEqual([]);
  });

  it('keeps FIFO per correlation id (invariant C): runs in order, nothing after an un-acked message, a nack releases the run', async () => {
    const x = `x-${randomUUID()}`;
    const y = `y-${randomUUID()}`;
    const m1 = await enqueue(x);
    const m2 = await enqueue(x);
    const m3 = await enqueue(x);
    const m4 = await enqueue(y);

    const first = await get(a, 1);
    expect(first.map((m) => m.messageId)).toEqual([m1.messageId]);
    // x is blocked behind m1; y is free.
    const second = await get(a, 10);
    expect(second.map((m) => m.messageId)).toEqual([m4.messageId]);
    expect(await get(a, 10)).toEqual([]);

    expect(await ack(a, [handleOf(a, first[0]!)])).toMatchObject([{ status: 'done' }]);
    const run = await get(a, 10);
    expect(run.map((m) => m.messageId)).toEqual([m2.messageId, m3.messageId]);

    // Nacking m2 releases m3 too: its handle stops working, and both come back, in order.
    expect(await nack(a, [handleOf(a, run[0]!)])).toMatchObject([{ status: 'done' }]);
    expect(await ack(a, [handleOf(a, run[1]!)])).toMatchObject([{ status: 'failed', code: 'receipt_handle.stale' }]);
    const again = await get(a, 10);
    expect(again.map((m) => [m.messageId, m.receiveCount])).toEqual([
      [m2.messageId, 2],
      [m3.messageId, 2],
    ]);
  });

  it('makes a message receivable again when its lease expires, with receive_count + 1, and the old handle fails', async () => {
    const m = await enqueue(`e-${randomUUID()}`);
    const [first] = await get(a, 1, 300);
    expect(first?.receiveCount).toBe(1);
    expect(await get(a)).toEqual([]);
    const [second] = await get(a, 1, 30_000, 3_000); // long poll woken by the lease's end, not by a loop
    expect([second?.messageId, second?.receiveCount]).toEqual([m.messageId, 2]);
    expect(await ack(a, [handleOf(a, first!)])).toMatchObject([{ status: 'failed', code: 'receipt_handle.stale' }]);
    expect(await ack(a, [handleOf(a, second!)])).toMatchObject([{ status: 'done' }]);
  });

  it('holds a nacked message back for its delay', async () => {
    const m = await enqueue(`d-${randomUUID()}`);
    const [got] = await get(a);
    const at = Date.now();
    await nack(a, [handleOf(a, got!)], 700);
    expect(await get(a)).toEqual([]);
    const [back] = await get(a, 10, 30_000, 5_000);
    expect(back?.messageId).toBe(m.messageId);
    expect(Date.now() - at).toBeGreaterThanOrEqual(650);
  });

  it('answers an empty receive, in its one round trip, with when its next head becomes visible: a gate delay, a lease end, a nack delay', async () => {
    const [workspace, consumer] = ['wpullnextvis2', 'cpullnextvis2'];
    await database.tenancy.tenant({ workspaceId: workspace, connections: [{ id: consumer, kind: 'consumer' }] });
    const enqueueTo = (correlationId: string) =>
      deliveries.enqueue(messageToEnqueue(workspace, correlationId, { messageId: randomUUID(), body: Buffer.from('{}') }));
    const emptyReceive = async (visibilityMs: number, gate?: ReceiveGate) => {
      const { result, roundTrips: statements } = await roundTrips(() => deps.store.receive(consumer, 10, visibilityMs, gate));
      expect([result.messages, result.contended, statements]).toEqual([[], false, 1]);
      return result.nextVisibleAt;
    };
    const near = (at: Date | null, ms: number) => Math.abs((at?.getTime() ?? 0) - (Date.now() + ms)) < 2_000;

    expect(await emptyReceive(30_000)).toBeNull();
    await enqueueTo('x');
    expect(near(await emptyReceive(30_000, { receiveLimit: null, delayMs: 10_000 }), 10_000)).toBe(true);
    const [x] = (await deps.store.receive(consumer, 10, 20_000)).messages;
    await enqueueTo('y');
    const free = await deps.store.receive(consumer, 10, 60_000);
    expect([free.messages.map((m) => m.correlationId), free.nextVisibleAt]).toEqual([['y'], null]);
    expect(near(await emptyReceive(30_000), 20_000)).toBe(true);
    await deps.store.nack(consumer, [{ deliveryId: free.messages[0]!.deliveryId, generation: free.messages[0]!.generation }], 5_000);
    expect(near(await emptyReceive(30_000), 5_000)).toBe(true);
    await deps.store.ack(consumer, [{ deliveryId: x!.deliveryId, generation: x!.generation }]);
    expect(near(await emptyReceive(30_000), 5_000)).toBe(true);
  });

  it('answers a long poll promptly after an enqueue (NOTIFY), well before its wait ends', async () => {
    const polls = countingWaits();
    const waiting = get(a, 10, 30_000, 10_000, polls.pull);
    await eventually(polls.waiting, (n) => n >= 1, { what: 'the long poll waiting' });
    const enqueuedAt = Date.now();
    const m = await enqueue(`n-${randomUUID()}`);
    const got = await waiting;
    const latency = Date.now() - enqueuedAt;
    expect(got.map((g) => g.messageId)).toEqual([m.messageId]);
    expect(latency).toBeLessThan(500);
  });

  it('leases nothing for a client that hung up before the read: the message stays for the next receive, first received there', async () => {
    const m = await enqueue(`h-${randomUUID()}`);
    const hungUp = new AbortController();
    hungUp.abort();
    expect(await receive(deps, a, { maxMessages: 10, waitMs: 10_000, visibilityMs: 30_000, signal: hungUp.signal })).toEqual([]);
    const received = [];
    for (let batch = await get(a, 10); batch.length > 0; batch = await get(a, 10)) received.push(...batch);
    expect(received.filter((r) => r.messageId === m.messageId).map((r) => r.receiveCount)).toEqual([1]);
  });

  it('answers a long poll parked behind a correlation id as soon as an ack makes its next message the head', async () => {
    const story = `k-${randomUUID()}`;
    const [first, second] = [await enqueue(story), await enqueue(story)];
    const leased = await get(a, 1);
    expect(leased.map((m) => m.messageId)).toEqual([first.messageId]);
    const polls = countingWaits();
    const waiting = get(a, 10, 30_000, 10_000, polls.pull);
    await eventually(polls.waiting, (n) => n >= 1, { what: 'the long poll waiting' });
    const ackedAt = Date.now();
    expect(await ack(a, [handleOf(a, leased[0]!)])).toEqual([{ receipt_handle: handleOf(a, leased[0]!), status: 'done' }]);
    const got = await waiting;
    expect(got.map((m) => m.messageId)).toEqual([second.messageId]);
    expect(Date.now() - ackedAt).toBeLessThan(500);
  });

  it('never hands one message to two concurrent receivers (SKIP LOCKED)', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 40; i++) ids.add((await enqueue(`p-${i}-${randomUUID()}`)).messageId);
    const batches = await Promise.all(Array.from({ length: 12 }, () => get(a, 10)));
    const seen = batches.flat().map((m) => m.messageId);
    expect(new Set(seen).size).toBe(seen.length);
    const rest = await get(a, 10);
    const all = [...seen, ...rest.map((m) => m.messageId)];
    expect(all.every((id) => ids.has(id))).toBe(true);
  });

  it('leases receives that waited for one another in one statement, each answer whole runs from a head of its own, oldest first', async () => {
    const groups = Array.from({ length: 9 }, (_, i) => `t${i}-${randomUUID()}`);
    const sent: string[][] = groups.map(() => []);
    for (let round = 0; round < 3; round++) for (const [i, group] of groups.entries()) sent[i]!.push((await enqueue(group)).messageId);
    // Three receives of 5 at once: the first goes alone, the two that arrived meanwhile lease together.
    const { result, roundTrips: statements } = await roundTrips(() => Promise.all([0, 1, 2].map(() => deps.store.receive(a, 5, 30_000))));
    expect(statements).toBe(2);
    // Each answer is filled to 5 by the oldest heads' runs, its last run cut; the cut rest is in no
    // answer (it stays queued behind its leased head), the next answer starts at the next head.
    expect(result.map((r) => r.messages.map((m) => m.messageId))).toEqual([
      [...sent[0]!, ...sent[1]!.slice(0, 2)],
      [...sent[2]!, ...sent[3]!.slice(0, 2)],
      [...sent[4]!, ...sent[5]!.slice(0, 2)],
    ]);
    expect(result.map((r) => r.contended)).toEqual([false, false, false]);
    const rest = await get(a, 10);
    expect(rest.map((m) => m.messageId)).toEqual([...sent[6]!, ...sent[7]!, ...sent[8]!]);
  });

  it('settles acks that waited for one another in one statement, each answered for its own handles as if alone', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 9; i++) sent.push((await enqueue(`k${i}-${randomUUID()}`)).messageId);
    const leased = (await deps.store.receive(a, 9, 30_000)).messages;
    const [one, two, three] = [leased.slice(0, 3), leased.slice(3, 6), leased.slice(6, 9)].map((ms) =>
      ms.map((m) => ({ deliveryId: m.deliveryId, generation: m.generation })),
    );
    // The first goes alone; the three after it together: the third names the second's first lease again.
    const { result, roundTrips: statements } = await roundTrips(() =>
      Promise.all([
        deps.store.ack(a, one!),
        deps.store.ack(a, two!),
        deps.store.ack(a, three!),
        deps.store.ack(a, [two![0]!, { deliveryId: '1', generation: 1 }]),
      ]),
    );
    expect(statements).toBe(2);
    expect(result).toEqual([
      ['done', 'done', 'done'],
      ['done', 'done', 'done'],
      ['done', 'done', 'done'],
      ['stale', 'stale'],
    ]);
    expect(await get(a, 10)).toEqual([]);
  });

  it('answers a receive dealt nothing by a statement that found heads as contended, so its long poll reads again at once', async () => {
    const sent = [(await enqueue(`c1-${randomUUID()}`)).messageId, (await enqueue(`c2-${randomUUID()}`)).messageId];
    // Receives of 1: the first alone takes the oldest head; the two after it lease together, one head left for them.
    const results = await Promise.all([0, 1, 2].map(() => deps.store.receive(a, 1, 30_000)));
    expect(results.map((r) => [r.messages.map((m) => m.messageId), r.contended])).toEqual([
      [[sent[0]], false],
      [[sent[1]], false],
      [[], true],
    ]);
  });

  it('takes the next free head while other receives hold the oldest ten, instead of answering contended', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 11; i++) sent.push((await enqueue(`h-${i}-${randomUUID()}`)).messageId);
    const oldestTen = await db('deliveries').where({ consumer_id: a }).whereIn('message_id', sent.slice(0, 10)).pluck('id');
    const trx = await db.transaction();
    try {
      // As ten receives mid-statement would: each of the ten oldest heads locked by another transaction.
      await trx('deliveries').whereIn('id', oldestTen).forUpdate().select('id');
      const got = await deps.store.receive(a, 10, 30_000);
      expect(got.messages.map((m) => m.messageId)).toEqual([sent[10]]);
    } finally {
      await trx.rollback();
    }
    expect((await get(a, 10)).map((m) => m.messageId)).toEqual(sent.slice(0, 10));
  });

  it('over many correlation ids hands out the oldest heads first, each with its run in order', async () => {
    const groups = Array.from({ length: 50 }, (_, i) => `m${i}-${randomUUID()}`);
    const sent: string[][] = groups.map(() => []);
    for (let round = 0; round < 2; round++) for (const [i, group] of groups.entries()) sent[i]!.push((await enqueue(group)).messageId);
    const got = await get(a, 10);
    expect(got.map((m) => m.messageId)).toEqual(sent.slice(0, 5).flat());
  });

  it('finds the other correlation ids’ heads behind a story whose head is leased, longer than a receive walks from the oldest', async () => {
    const story = `long-${randomUUID()}`;
    const long: string[] = [];
    // A receive of 10 walks the 160 oldest un-acked rows for heads; past them it probes each correlation id.
    for (let i = 0; i < 170; i++) long.push((await enqueue(story)).messageId);
    const firstRun = await get(a, 10);
    expect(firstRun.map((m) => m.messageId)).toEqual(long.slice(0, 10));
    // Enqueued after the whole story: the oldest rows are all the story's, its head leased.
    const others = [(await enqueue(`o1-${randomUUID()}`)).messageId, (await enqueue(`o2-${randomUUID()}`)).messageId];
    expect((await get(a, 10)).map((m) => m.messageId)).toEqual(others);
    const handles = firstRun.map((m) => handleOf(a, m));
    expect((await ack(a, handles)).map((r) => r.status)).toEqual(handles.map(() => 'done'));
    expect((await get(a, 10)).map((m) => m.messageId)).toEqual(long.slice(10, 20));
  });

  it('lets concurrent long polls share messages without one sleeping through a receivable message', async () => {
    const t0 = Date.now();
    const polls = countingWaits();
    const waiting = Array.from({ length: 8 }, () => get(a, 1, 30_000, 3_000, polls.pull).then((got) => ({ got, ms: Date.now() - t0 })));
    await eventually(polls.waiting, (n) => n >= 8, { what: 'the 8 long polls waiting' });
    const ids = [(await enqueue(`l-${randomUUID()}`)).messageId, (await enqueue(`l-${randomUUID()}`)).messageId];
    const results = await Promise.all(waiting);
    const winners = results.filter((r) => r.got.length > 0);
    expect(winners.flatMap((r) => r.got.map((m) => m.messageId)).sort()).toEqual([...ids].sort());
    for (const w of winners) expect(w.ms).toBeLessThan(1_500);
  });
  it('receives up to 10, acks 10 handles and nacks 10 handles in one Postgres round trip each, FIFO kept', async () => {
    const groups = [`r1-${randomUUID()}`, `r2-${randomUUID()}`, `r3-${randomUUID()}`];
    const sent: string[] = [];
    for (let i = 0; i < 12; i++) sent.push((await enqueue(groups[i % 3]!)).messageId);
    const inOrderOf = (group: number) => sent.filter((_, i) => i % 3 === group);

    const received = await roundTrips(() => deps.store.receive(a, 10, 30_000));
    expect(received.roundTrips).toBe(1);
    const leased = received.result.messages;
    expect(leased).toHaveLength(10);
    // Whole runs in order: every correlation id's messages in enqueue order, nothing skipped in a run.
    for (const group of [0, 1, 2]) {
      const got = leased.filter((m) => m.correlationId === groups[group]).map((m) => m.messageId);
      expect(got).toEqual(inOrderOf(group).slice(0, got.length));
    }

    const acked = await roundTrips(() =>
      ack(
        a,
        leased.map((m) => handleOf(a, m)),
      ),
    );
    expect(acked.roundTrips).toBe(1);
    expect(acked.result.map((r) => r.status)).toEqual(Array(10).fill('done'));

    const rest = (await get(a, 10)).map((m) => m.messageId);
    expect(rest.sort()).toEqual(sent.filter((id) => !leased.some((m) => m.messageId === id)).sort());
    await drain(a);

    for (let i = 0; i < 10; i++) await enqueue(`n${i}-${randomUUID()}`);
    const ten = await get(a, 10);
    const nacked = await roundTrips(() =>
      nack(
        a,
        ten.map((m) => handleOf(a, m)),
        0,
      ),
    );
    expect(nacked.roundTrips).toBe(1);
    expect(nacked.result.map((r) => r.status)).toEqual(Array(10).fill('done'));
    expect((await get(a, 10)).map((m) => [m.messageId, m.receiveCount])).toEqual(ten.map((m) => [m.messageId, 2]));
  });

  it('locks the rows of a lease change and of injected faults in id order, so they wait behind a nack instead of deadlocking with it', async () => {
    const group = `lock-${randomUUID()}`;
    await enqueue(group);
    await enqueue(group);
    const [first, second] = (await deps.store.receive(a, 10, 30_000)).messages;
    // The first row's latest version stored after the second's, with index entries of its own (a change
    // to an indexed column, undone), as a busy table's rows end up: scans of the table meet the second first.
    for (const change of ['+', '-'])
      await db.raw(`update deliveries set enqueued_at = enqueued_at ${change} interval '1 second' where id = ?`, [first!.deliveryId]);
    // Named in the order a receive's answer can name them (by head, then id): not id order.
    const leases = [second!, first!].map((m) => ({ deliveryId: m.deliveryId, generation: m.generation }));
    const statements = {
      extend: () => deps.store.extend(a, leases, 60_000),
      recordReceiveFaults: () => deps.tools.recordReceiveFaults(a, { cut: leases, leaseMs: 30_000, delayed: [], delayMs: 0 }),
    };
    const waitingForLocks = async () =>
      Number((await db.raw(`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rows[0].n);
    for (const [name, run] of Object.entries(statements)) {
      // A nack's statement: it holds the first row and goes on to the second, in id order.
      const nack = await db.transaction();
      await nack.raw('select id from deliveries where id = ? for update', [first!.deliveryId]);
      const outcome = run().then(
        () => 'done',
        (err: Error) => `${err.message} (${String((err.cause as Error | undefined)?.message ?? '')})`,
      );
      await eventually(waitingForLocks, (n) => n > 0, { what: `${name} waiting for the first row` });
      // The second row is free unless the statement took it before it waited for the first; then
      // Postgres finds the deadlock (deadlock_timeout, 1 s) and fails one of the two.
      await nack.raw(`set local lock_timeout = '5s'`);
      const secondLocked = await nack.raw('select id from deliveries where id = ? for update', [second!.deliveryId]).then(
        () => 'locked',
        (err: { code?: string }) => err.code,
      );
      await (secondLocked === 'locked' ? nack.commit() : nack.rollback());
      expect({ name, secondLocked, statement: await outcome }).toEqual({ name, secondLocked: 'locked', statement: 'done' });
    }
    const faulted = await db('consumer_fault_events').where({ consumer_id: a, kind: 'early_expiry' }).select('delivery_id');
    expect(faulted.map((f) => String(f.delivery_id)).sort()).toEqual(leases.map((l) => l.deliveryId).sort());
  });

  it('answers a batch nack handle by handle as one nack at a time would: a run released by an earlier handle is stale, a repeated handle too', async () => {
    const x = `x-${randomUUID()}`;
    const y = `y-${randomUUID()}`;
    const [x1, x2, x3] = [await enqueue(x), await enqueue(x), await enqueue(x)];
    const y1 = await enqueue(y);
    const got = await get(a, 10);
    const byId = new Map(got.map((m) => [m.messageId, handleOf(a, m)]));
    const h = (m: { messageId: string }) => byId.get(m.messageId)!;
    // x2 first: it and the run after it (x3) come back; x1 after it is still its own lease; x3 was
    // released by x2; y1 twice: done once.
    const results = await nack(a, [h(x2), h(x1), h(x3), h(y1), h(y1)], 0);
    expect(results.map((r) => r.status)).toEqual(['done', 'done', 'failed', 'done', 'failed']);
    expect((await get(a, 10)).map((m) => [m.messageId, m.receiveCount])).toEqual([
      [x1.messageId, 2],
      [x2.messageId, 2],
      [x3.messageId, 2],
      [y1.messageId, 2],
    ]);
  });
});
