// End-to-end benchmark of delivery and the pull API (`npm run bench:e2e`; needs the local stack:
// deploy/local/stack.sh up). Not a test: the figures depend on the machine, so nothing here passes or
// fails, and it stops by itself (every loop is bounded in count and time; loopback only).
//
// Starts the real bus on a database of its own — the all-in-one process (gateway, delivery and pull
// API in one process, as `npm run up`) and the standalone layout (auth, gateway, delivery and pull-api
// as separate processes, as in Kubernetes), one after the other (BENCH_LAYOUT=all-in-one|standalone
// for one only) — provisions one workspace on the custom tier of 200/s (bursts of 400) with
// PRODUCERS producer connections and one consumer connection, and measures over HTTP on 127.0.0.1:
//   (a) publish → receivable latency at a steady RATE msg/s (BENCH_RATE, 200) for BENCH_SECONDS (60),
//       while the consumer long-polls continuously (BENCH_RECEIVERS loops, 1): latency = the receive answer's arrival − the
//       publish's 202 arrival, and also − the publish's start; the p99 of the first and of the last
//       10 s of publishes too (a steady state keeps them alike; a backlog grows the last);
//   (b) long-poll wake-up: a receive already waiting (wait_seconds=20) on an empty queue, then one
//       publish: the receive answer's arrival − the publish's 202 arrival (and − its start), TRIALS times;
//   (c) sustained receive + ack messages/s for the one consumer, batches of 10, one call at a time
//       and with 4 calls in flight (BENCH_DRAIN, 1,4), each over a queue pre-filled with BACKLOG messages.
// Each of (a) and (c) prints the CPU milliseconds per 1,000 messages of every process (bus processes,
// the bench itself, Postgres, Kafka, Redis; support.js cpuMeter). The machine's load (uptime) is printed
// with the figures: other work on it skews them.
// The bus host's whole-API limit (200/s) would throttle a run that publishes at 200/s and receives at
// the same time, so startBus() raises BUS_LIMIT_* for the run; the per-connection quotas stay on.
'use strict';

const { performance } = require('node:perf_hooks');
const { som } = require('@bus/schemas');
const {
  CONNECTION_FACTOR,
  cpuLine,
  busClient,
  cpuMeter,
  machine,
  percentile,
  provisionWorkspace,
  publishAtRate,
  startBus,
  statementTable,
} = require('./support');

const RATE = Number(process.env.BENCH_RATE ?? 200);
const RUN_SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
// (a)'s receive loops of the one consumer connection (calls in flight): one keeps up with 200 msg/s;
// 1,000 msg/s needs several, as a real consumer at that rate would run.
const RECEIVERS = Number(process.env.BENCH_RECEIVERS ?? 1);
// The window whose p99 is compared at the start and the end of (a).
const EDGE_SECONDS = 10;
const LAYOUTS = process.env.BENCH_LAYOUT ? [process.env.BENCH_LAYOUT] : ['all-in-one', 'standalone'];
// (c)'s calls in flight, one run each (BENCH_DRAIN, comma-separated, to run some of them only).
const DRAIN_CONCURRENCY = (process.env.BENCH_DRAIN ?? '1,4').split(',').map(Number);
const WARM_UP_SECONDS = 2;
const TRIALS = Number(process.env.BENCH_TRIALS ?? 100);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 5000);
// Spreads the steady rate over several connections so no single one sits at its 200/s tier.
const PRODUCERS = 4;
const CORRELATION_IDS = 256;
// At most this many publishes in flight: past it the schedule slips (the achieved rate says so)
// instead of piling up thousands of open requests on a machine that cannot keep up.
const MAX_IN_FLIGHT = 64;
// How long (b) lets a receive settle into its wait before publishing.
const PARK_MS = 100;
// Upper bound of every waiting loop, so the bench always ends.
const PHASE_TIMEOUT_MS = 180_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

/**
 * (a) Publishes at a steady rate (open loop: each publish starts on its schedule) while one loop
 * receives and acks. The latency is split at the delivery row's enqueued_at: 202 → enqueued is
 * delivery (Kafka consumer, acceptance check, insert), enqueued → received is the pull API.
 */
async function publishToReceivable(api, db, consumerId, cpu) {
  const total = RATE * (WARM_UP_SECONDS + RUN_SECONDS);
  const measuredFrom = RATE * WARM_UP_SECONDS;
  const published = new Map();
  const received = new Map();
  const acks = [];
  let publishing = true;

  const deadline = now() + (WARM_UP_SECONDS + RUN_SECONDS) * 1000 + PHASE_TIMEOUT_MS;
  const receiveLoop = async () => {
    while ((publishing || received.size < published.size) && now() < deadline) {
      const r = await api.receive(2);
      if (r.status === 429) {
        await sleep(r.retryAfter * 1000);
        continue;
      }
      const wall = Date.now();
      for (const m of r.messages) if (!received.has(m.message_id)) received.set(m.message_id, { at: r.at, wall });
      // Acked alongside the next receive: a message waits for its predecessor of the same correlation
      // id (invariant C), which here was published 256 messages (over a second) earlier.
      if (r.messages.length > 0) acks.push(api.ack(r.messages.map((m) => m.receipt_handle)));
    }
  };
  const consumer = Promise.all(Array.from({ length: RECEIVERS }, receiveLoop));

  const cpuBefore = cpu.sample();
  const { refused, achievedRate } = await publishAtRate(api, {
    rate: RATE,
    total,
    correlationId: (i) => `bench-${i % CORRELATION_IDS}`,
    maxInFlight: MAX_IN_FLIGHT,
    published,
  });
  publishing = false;
  await consumer;
  await Promise.all(acks);
  const cpuPerThousand = cpu.perThousand(cpuBefore, cpu.sample(), received.size);

  const rows = await db('deliveries').where({ consumer_id: consumerId }).select('message_id', 'enqueued_at');
  const enqueuedAt = new Map(rows.map((r) => [r.message_id, new Date(r.enqueued_at).getTime()]));
  const fromAccepted = [];
  const firstSeconds = [];
  const lastSeconds = [];
  const fromStart = [];
  const toEnqueued = [];
  const enqueuedToReceived = [];
  let lost = 0;
  // The last window ends at the last measured publish: on a machine that cannot keep the rate, the
  // schedule slips past RUN_SECONDS.
  const measured = [...published].filter(([, p]) => p.index >= measuredFrom).map(([id, p]) => [id, { ...p, second: p.second - WARM_UP_SECONDS }]);
  const lastSecond = Math.max(...measured.map(([, p]) => p.second));
  for (const [id, p] of measured) {
    const got = received.get(id);
    if (got === undefined) lost += 1;
    else {
      fromAccepted.push(got.at - p.acceptedAt);
      if (p.second < EDGE_SECONDS) firstSeconds.push(got.at - p.acceptedAt);
      if (p.second >= lastSecond - EDGE_SECONDS) lastSeconds.push(got.at - p.acceptedAt);
      fromStart.push(got.at - p.startedAt);
      toEnqueued.push(enqueuedAt.get(id) - p.acceptedWall);
      enqueuedToReceived.push(got.wall - enqueuedAt.get(id));
    }
  }
  return {
    achievedRate,
    cpuPerThousand,
    fromAccepted: stats(fromAccepted),
    first: stats(firstSeconds),
    last: stats(lastSeconds),
    fromStart: stats(fromStart),
    toEnqueued: stats(toEnqueued),
    enqueuedToReceived: stats(enqueuedToReceived),
    refused,
    lost,
  };
}

/** (b) A receive waits on an empty queue; one publish; how long until the receive answers. */
async function longPollWakeUp(api) {
  const fromAccepted = [];
  const fromStart = [];
  let missed = 0;
  const deadline = now() + PHASE_TIMEOUT_MS;
  for (let trial = 0; trial < TRIALS && now() < deadline; trial++) {
    const waiting = api.receive(20);
    await sleep(PARK_MS);
    const p = await api.publish(trial, `wake-${trial}`);
    const r = await waiting;
    const got = r.messages.find((m) => m.message_id === p.messageId);
    if (p.status !== 202 || !got) missed += 1;
    else {
      fromAccepted.push(r.at - p.acceptedAt);
      fromStart.push(r.at - p.startedAt);
    }
    if (r.messages.length > 0) await api.ack(r.messages.map((m) => m.receipt_handle));
  }
  return { fromAccepted: stats(fromAccepted), fromStart: stats(fromStart), missed };
}

/**
 * (c) Pre-fills the consumer's queue, waits until delivery enqueued it all, then receives + acks it with
 * `concurrency` calls in flight; Postgres' figures per statement (`statements`, support.js) of the drain.
 */
async function receiveAndAck(api, db, consumerId, concurrency, cpu, statements) {
  let next = 0;
  const prefill = async () => {
    while (next < BACKLOG) {
      const i = next++;
      for (;;) {
        const p = await api.publish(i, `backlog-${i % CORRELATION_IDS}`);
        if (p.status === 202) break;
        // A producer's quota (a fast bus fills a queue faster than one connection may publish): wait as told.
        if (p.status !== 429) throw new Error(`pre-fill publish answered ${p.status}`);
        await sleep(p.retryAfter * 1000);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, prefill));
  const queued = async () => Number((await db('deliveries').where({ consumer_id: consumerId }).whereNot({ state: 'acked' }).count({ n: '*' }))[0].n);
  const enqueueDeadline = now() + PHASE_TIMEOUT_MS;
  while ((await queued()) < BACKLOG && now() < enqueueDeadline) await sleep(250);
  const backlog = await queued();

  let acked = 0;
  let calls = 0;
  let limited = 0;
  const statementsBefore = await statements.sample();
  const started = now();
  const cpuBefore = cpu.sample();
  const deadline = started + PHASE_TIMEOUT_MS;
  // The drain ends with the ack of the backlog's last message. The other loops may then still sit in a
  // long poll (wait_seconds=1) on a queue whose last messages another loop held: up to a second of
  // nothing at the end, which is not the drain's (it understated 4 in flight by up to a quarter).
  let finished;
  // Each loop receives and then acks what it got; with several, their calls overlap. A loop that finds
  // nothing receivable (the others hold the heads of every correlation id) asks again.
  const loop = async () => {
    while (acked < backlog && now() < deadline) {
      const r = await api.receive(1);
      calls += 1;
      if (r.status === 429) {
        limited += 1;
        await sleep(r.retryAfter * 1000);
        continue;
      }
      if (r.messages.length === 0) continue;
      const handles = r.messages.map((m) => m.receipt_handle);
      for (;;) {
        const a = await api.ack(handles);
        calls += 1;
        if (a.status !== 429) {
          acked += a.done;
          if (acked >= backlog && finished === undefined) finished = { at: now(), cpu: cpu.sample() };
          break;
        }
        limited += 1;
        await sleep(a.retryAfter * 1000);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  finished ??= { at: now(), cpu: cpu.sample() };
  const seconds = (finished.at - started) / 1000;
  return {
    concurrency,
    backlog,
    acked,
    perSecond: acked / seconds,
    seconds,
    callsPerSecond: calls / seconds,
    limited,
    cpuPerThousand: cpu.perThousand(cpuBefore, finished.cpu, acked),
    statements: statements.costs(statementsBefore, await statements.sample()),
  };
}

/** The load of the machine (1, 5 and 15 minutes), to read the figures by. */
function load() {
  return require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

async function runLayout(layout) {
  const bench = await startBus(`bench-e2e-${layout}`, { layout });
  try {
    const { workspace, producers, consumers } = await provisionWorkspace(bench, {
      systemId: som.examples['story.context'].system_id,
      messageTypes: Object.keys(som.examples),
      producers: PRODUCERS,
      consumers: 1,
    });
    const api = busClient(bench.urls, workspace, producers, consumers[0]);
    const cpu = cpuMeter({ ...Object.fromEntries(Object.entries(bench.processes).map(([name, p]) => [name, p.child.pid])), bench: process.pid });
    const loadBefore = load();
    const statementsBeforeA = await bench.statements.sample();
    const latency = await publishToReceivable(api, bench.db, consumers[0].clientId, cpu);
    const statementsOfA = bench.statements.costs(statementsBeforeA, await bench.statements.sample());
    const loadAfterA = load();
    const wake = await longPollWakeUp(api);
    const drains = [];
    for (const concurrency of DRAIN_CONCURRENCY)
      drains.push({ ...(await receiveAndAck(api, bench.db, consumers[0].clientId, concurrency, cpu, bench.statements)), load: load() });

    const ms = (v) => (v === undefined ? '—' : v.toFixed(1));
    console.log(
      `\nEnd-to-end benchmark, ${layout} — ${machine()}; on 127.0.0.1, BUS_LIMIT_* raised for the run, workspace on the custom tier 200/s × BUS_LIMIT_CONNECTION_FACTOR ${CONNECTION_FACTOR}\n`,
    );
    console.log(
      `Load average (1, 5, 15 min) before (a): ${loadBefore}; after (a): ${loadAfterA}. Network errors (calls that got no answer): ${api.networkErrors}\n`,
    );
    console.log('| measure | n | p50 ms | p99 ms | max ms | notes |');
    console.log('|---|---|---|---|---|---|');
    const row = (name, s, notes) => console.log(`| ${name} | ${s.count} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ${notes} |`);
    const steady = `${RATE} msg/s asked, ${latency.achievedRate.toFixed(0)} achieved, ${RUN_SECONDS} s measured after ${WARM_UP_SECONDS} s warm-up, ${RECEIVERS} receive loop(s); ${latency.refused} not 202, ${latency.lost} never received`;
    row('(a) publish 202 → received', latency.fromAccepted, steady);
    row(`(a) publish 202 → received, first ${EDGE_SECONDS} s`, latency.first, 'steady state: first and last alike');
    row(`(a) publish 202 → received, last ${EDGE_SECONDS} s`, latency.last, 'a backlog makes it grow');
    row('(a) publish start → received', latency.fromStart, 'same messages');
    row('(a) of which publish 202 → enqueued (delivery)', latency.toEnqueued, 'wall clock, enqueued_at from Postgres');
    row('(a) of which enqueued → received (pull API)', latency.enqueuedToReceived, 'wall clock');
    row('(b) long-poll wake-up: publish 202 → receive answered', wake.fromAccepted, `receive parked ${PARK_MS} ms before the publish; ${wake.missed} missed`);
    row('(b) long-poll wake-up: publish start → receive answered', wake.fromStart, 'same trials');
    console.log(`\nCPU ms per 1,000 messages, (a) publish → receive + ack: ${cpuLine(latency.cpuPerThousand)}`);
    console.log(`\nPostgres per statement, (a):\n\n${statementTable(statementsOfA)}`);
    console.log('\n| measure | messages | seconds | messages/s | calls/s | 429s | load after | CPU ms per 1,000 messages |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const d of drains) {
      const how = d.concurrency === 1 ? 'one call at a time' : `${d.concurrency} calls in flight`;
      console.log(
        `| (c) receive + ack, batches of 10, one consumer, ${how} | ${d.acked} of ${d.backlog} | ${d.seconds.toFixed(1)} | ${d.perSecond.toFixed(0)} | ${d.callsPerSecond.toFixed(0)} | ${d.limited} | ${d.load} | ${cpuLine(d.cpuPerThousand)} |`,
      );
    }
    for (const d of drains) console.log(`\nPostgres per statement, (c) with ${d.concurrency} in flight:\n\n${statementTable(d.statements)}`);
  } finally {
    await bench.stop();
  }
}

async function main() {
  for (const layout of LAYOUTS) await runLayout(layout);
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
