// Receive cost against open correlation ids (`npm run bench:growth`; needs the local stack:
// deploy/local/stack.sh up). Not a test: the figures depend on the machine and Postgres, so nothing
// here passes or fails, and it stops by itself (every loop is bounded in count and time; loopback only).
//
// On a database of its own, one consumer connection's queue is built through the delivery store (the
// enqueue the delivery service runs): first BENCH_GROWTH_ACKED (20,000) messages received and acked
// (acked rows stay for the queue window, older than everything queued), then a held story — its head leased for the whole run, 200 more
// messages queued behind it, the queue's oldest rows — then 20 working correlation ids of one message
// each, then N open correlation ids of one message each. The store's receive (max 10, the pull API's
// lease statement) is timed, each answer nacked back at once so the queue stays the same: it leases the
// 20 working ids' oldest heads, never the held story and never the N newer ids. For N in
// BENCH_GROWTH_IDS (0, 1,000, 10,000, 100,000) it prints receive p50 and p99, the ratio of each to N = 0
// measured in the same run (the baseline), the lease statement's shared buffers per call
// (pg_stat_statements: work, not time, so it compares on a busy machine), and CPU ms per 1,000 messages
// received of Postgres (every backend of the shared server: other clients' work counts too) and of this
// process. Then the backlog: a second consumer's queue grown to each size in BENCH_GROWTH_BACKLOG (10,000,
// 100,000, 1,000,000; empty skips it), receive + ack p50 and p99 and their ratio to the first size. Then
// open dead letters: for each N in BENCH_GROWTH_DEAD (0, 10,000, 100,000; empty skips it) a consumer of
// its own with N stories of one message dead-lettered by the store's own step (their receive counts set
// past the threshold, then dead_letter_due until none is due), then the 20 working ids; receive p50, p99
// and lease buffers as above, against N = 0.
'use strict';

const { cpuLine, cpuMeter, directEnqueuer, loadStackEnv, machine, percentile, statementMeter } = require('./support');

const OPEN_IDS = (process.env.BENCH_GROWTH_IDS ?? '0,1000,10000,100000').split(',').map(Number);
const ACKED = Number(process.env.BENCH_GROWTH_ACKED ?? 20_000);
const HELD_RUN = 200;
const WORKING_IDS = 20;
const MAX = 10;
const WARM_UP = 10;
const RUN_MS = Number(process.env.BENCH_GROWTH_RUN_MS ?? 4_000);
const MIN_RECEIVES = 20;
const MAX_RECEIVES = 400;
const DEADLINE_MS = 900_000;
const BATCH = 1_000;
const BACKLOG = (process.env.BENCH_GROWTH_BACKLOG ?? '10000,100000,1000000').split(',').filter(Boolean).map(Number);
const BACKLOG_RUN = 10;
const DEAD = (process.env.BENCH_GROWTH_DEAD ?? '0,10000,100000').split(',').filter(Boolean).map(Number);
/** The dead-letter threshold of that part: the working ids, nacked a few hundred times, never reach it. */
const DEAD_THRESHOLD = 1_000_000;

/**
 * Receives (max MAX) of `consumer`'s working ids, each answer nacked back at once so the queue stays the
 * same: WARM_UP first, then for RUN_MS (at least MIN_RECEIVES, at most MAX_RECEIVES). Throws when a
 * receive leases anything but MAX working ids. Its p50 and p99 ms, the lease statement's buffers per
 * call and CPU ms per 1,000 messages received.
 */
async function workingIdReceives(queue, consumer, meter, cpu) {
  const cycle = async () => {
    const t0 = process.hrtime.bigint();
    const { messages } = await queue.receive(consumer, MAX, 30_000);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (messages.length !== MAX || messages.some((m) => !m.correlationId.startsWith('work-'))) {
      throw new Error(`a receive leased ${messages.map((m) => m.correlationId).join(', ')}, not ${MAX} working ids`);
    }
    await queue.nack(
      consumer,
      messages.map((m) => ({ deliveryId: m.deliveryId, generation: m.generation })),
      0,
    );
    return ms;
  };
  for (let i = 0; i < WARM_UP; i++) await cycle();
  const before = await meter.sample();
  const cpuBefore = cpu.sample();
  const latencies = [];
  const until = Date.now() + RUN_MS;
  while ((Date.now() < until || latencies.length < MIN_RECEIVES) && latencies.length < MAX_RECEIVES) latencies.push(await cycle());
  const cpuPerThousand = cpu.perThousand(cpuBefore, cpu.sample(), latencies.length * MAX);
  const after = await meter.sample();
  const lease = (meter.costs(before, after, 50) ?? []).find((c) => /SKIP LOCKED/.test(c.query) && /dealt/.test(c.query));
  latencies.sort((a, b) => a - b);
  return {
    receives: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    buffers: lease ? lease.buffers / lease.calls : null,
    cpuPerThousand,
  };
}

async function main() {
  loadStackEnv();
  const { createDatabase, migrateLatest } = require('@bus/db');
  const { TenancyFixture } = require('@bus/fixtures');
  const { KnexQueueStore } = require('@bus/queue');
  const { createTestDatabase } = require('@bus/testing');

  const started = Date.now();
  const database = await createTestDatabase('bus_bench');
  const db = createDatabase({ url: database.url, poolMax: 4, applicationName: 'bench-growth' });
  const stackDb = createDatabase({ url: process.env.DATABASE_URL, poolMax: 1, applicationName: 'bench-growth-meter' });
  try {
    await migrateLatest(db);
    const workspaceId = 'wbenchgrowthq';
    const consumer = 'cbenchgrowthq';
    await TenancyFixture.create(db).tenant({ workspaceId, connections: [{ id: consumer, kind: 'consumer' }] });
    const queue = KnexQueueStore.create(db);
    const enqueueInto = directEnqueuer(db, { batch: BATCH });
    const enqueue = (correlationIds, into = workspaceId) => enqueueInto(into, correlationIds);

    // The acked history: rows a receive must not read through.
    await enqueue(Array.from({ length: ACKED }, (_, i) => `acked-${i % 500}`));
    for (let acked = 0; acked < ACKED && Date.now() - started < DEADLINE_MS;) {
      const { messages } = await queue.receive(consumer, MAX, 60_000);
      if (messages.length === 0) throw new Error(`only ${acked} of ${ACKED} history messages received`);
      await queue.ack(
        consumer,
        messages.map((m) => ({ deliveryId: m.deliveryId, generation: m.generation })),
      );
      acked += messages.length;
    }
    // The held story: the oldest un-acked rows, its head leased for the whole run.
    await enqueue(Array.from({ length: HELD_RUN + 1 }, () => 'held'));
    const held = await queue.receive(consumer, 1, 3_600_000);
    if (held.messages.length !== 1 || held.messages[0].correlationId !== 'held') throw new Error('the held story was not leased first');
    await enqueue(Array.from({ length: WORKING_IDS }, (_, i) => `work-${i}`));

    const meter = statementMeter(stackDb, database.name);
    const cpu = cpuMeter({ bench: process.pid });
    const results = [];
    let open = 0;
    for (const n of OPEN_IDS) {
      if (Date.now() - started > DEADLINE_MS) break;
      await enqueue(Array.from({ length: n - open }, (_, i) => `open-${open + i}`));
      open = n;
      await db.raw('ANALYZE deliveries');
      results.push({ n, ...(await workingIdReceives(queue, consumer, meter, cpu)) });
    }

    const [base] = results;
    console.log(`bench:growth — ${machine()}`);
    console.log(
      `one consumer: ${ACKED} acked rows kept, a held story (head leased, ${HELD_RUN} queued behind it, the oldest un-acked rows), ${WORKING_IDS} working ids, N open ids; receive max ${MAX}, each answer nacked back`,
    );
    console.log('| open ids N | receives | p50 ms | p99 ms | p50 / N=0 | p99 / N=0 | lease buffers per call | CPU ms per 1,000 messages |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      console.log(
        `| ${r.n.toLocaleString('en')} | ${r.receives} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.p50 / base.p50).toFixed(2)} | ${(r.p99 / base.p99).toFixed(2)} | ${
          r.buffers === null ? 'n/a' : r.buffers.toFixed(0)
        } | ${cpuLine(r.cpuPerThousand)} |`,
      );
    }

    // The backlog: another workspace's consumer whose queue grows to each size in BENCH_GROWTH_BACKLOG,
    // stories of BACKLOG_RUN messages each; a receive (max 10) and the ack of what it got are timed together.
    const backlog = [];
    const backlogConsumer = 'cbenchbacklog';
    await TenancyFixture.create(db).tenant({ workspaceId: 'wbenchbacklog', connections: [{ id: backlogConsumer, kind: 'consumer' }] });
    let queued = 0;
    for (const n of BACKLOG) {
      if (Date.now() - started > DEADLINE_MS) break;
      await enqueue(
        Array.from({ length: n - queued }, (_, i) => `b-${Math.floor((queued + i) / BACKLOG_RUN)}`),
        'wbenchbacklog',
      );
      queued = n;
      await db.raw('ANALYZE deliveries');
      const cycle = async () => {
        const t0 = process.hrtime.bigint();
        const { messages } = await queue.receive(backlogConsumer, MAX, 30_000);
        if (messages.length !== MAX) throw new Error(`a receive of a ${n}-message backlog leased ${messages.length}`);
        await queue.ack(
          backlogConsumer,
          messages.map((m) => ({ deliveryId: m.deliveryId, generation: m.generation })),
        );
        return Number(process.hrtime.bigint() - t0) / 1e6;
      };
      for (let i = 0; i < WARM_UP; i++) await cycle();
      const latencies = [];
      const until = Date.now() + RUN_MS;
      while ((Date.now() < until || latencies.length < MIN_RECEIVES) && latencies.length < MAX_RECEIVES) latencies.push(await cycle());
      // What the cycles acked is put back, so the next size starts from its own count.
      await enqueue(
        Array.from({ length: (latencies.length + WARM_UP) * MAX }, (_, i) => `b-refill-${n}-${Math.floor(i / BACKLOG_RUN)}`),
        'wbenchbacklog',
      );
      latencies.sort((a, b) => a - b);
      backlog.push({ n, cycles: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) });
    }
    if (backlog.length > 0) {
      const [first] = backlog;
      console.log(`backlog: one consumer's queue of N un-acked messages, stories of ${BACKLOG_RUN}; receive (max ${MAX}) + ack of what it got, timed together`);
      console.log('| backlog N | cycles | p50 ms | p99 ms | p50 / first | p99 / first |');
      console.log('|---|---|---|---|---|---|');
      for (const r of backlog)
        console.log(
          `| ${r.n.toLocaleString('en')} | ${r.cycles} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.p50 / first.p50).toFixed(2)} | ${(r.p99 / first.p99).toFixed(2)} |`,
        );
    }

    // Open dead letters, older than every free head: a receive must not pass over them.
    const dead = [];
    for (const [part, n] of DEAD.entries()) {
      if (Date.now() - started > DEADLINE_MS) break;
      const deadWorkspace = `wbenchdeadqq${String.fromCharCode(97 + part)}`;
      const deadConsumer = `cbenchdeadqq${String.fromCharCode(97 + part)}`;
      await TenancyFixture.create(db).tenant({ workspaceId: deadWorkspace, connections: [{ id: deadConsumer, kind: 'consumer' }] });
      await enqueue(
        Array.from({ length: n }, (_, i) => `dead-${i}`),
        deadWorkspace,
      );
      await db('deliveries').where({ consumer_id: deadConsumer }).update({ receive_count: DEAD_THRESHOLD });
      let deadLettered = 0;
      for (let moved = -1; moved !== 0; deadLettered += moved) moved = Math.max(0, await queue.deadLetterDue(deadConsumer, DEAD_THRESHOLD));
      if (deadLettered !== n) throw new Error(`${deadLettered} of ${n} dead-lettered`);
      await enqueue(
        Array.from({ length: WORKING_IDS }, (_, i) => `work-${i}`),
        deadWorkspace,
      );
      // Dead-lettering wrote each row anew; autovacuum, not this bench's seconds, clears the old versions.
      await db.raw('VACUUM (ANALYZE) deliveries');
      dead.push({ n, ...(await workingIdReceives(queue, deadConsumer, meter, cpu)) });
    }
    if (dead.length > 0) {
      const [first] = dead;
      console.log(
        `open dead letters: a consumer's N stories stopped at a dead letter, older than its ${WORKING_IDS} working ids; receive max ${MAX}, each answer nacked back`,
      );
      console.log('| dead letters N | receives | p50 ms | p99 ms | p50 / N=0 | p99 / N=0 | lease buffers per call |');
      console.log('|---|---|---|---|---|---|---|');
      for (const r of dead)
        console.log(
          `| ${r.n.toLocaleString('en')} | ${r.receives} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.p50 / first.p50).toFixed(2)} | ${(r.p99 / first.p99).toFixed(2)} | ${
            r.buffers === null ? 'n/a' : r.buffers.toFixed(0)
          } |`,
        );
    }
  } finally {
    await db.destroy();
    await stackDb.destroy();
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
