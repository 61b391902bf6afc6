// End-to-end benchmark of delivery and the pull API (`npm run bench:e2e`; needs the local stack:
// deploy/local/stack.sh up). Not a test: the figures depend on the machine, so nothing here passes or
// fails, and it stops by itself (every loop is bounded in count and time; loopback only).
//
// Starts the real all-in-one process (gateway, delivery and pull API in one process, as `npm run up`)
// on a database of its own, provisions one workspace on the custom tier of 200/s (bursts of 400) with
// PRODUCERS producer connections and one consumer connection, and measures over HTTP on 127.0.0.1:
//   (a) publish → receivable latency at a steady RATE msg/s for BENCH_SECONDS, while the consumer
//       long-polls continuously: latency = the receive answer's arrival − the publish's 202 arrival,
//       and also − the publish's start;
//   (b) long-poll wake-up: a receive already waiting (wait_seconds=20) on an empty queue, then one
//       publish: the receive answer's arrival − the publish's 202 arrival (and − its start), TRIALS times;
//   (c) sustained receive + ack messages/s for the one consumer, batches of 10, one request at a time,
//       over a queue pre-filled with BACKLOG messages.
// The bus host's whole-API limit (200/s) would throttle a run that publishes at 200/s and receives at
// the same time, so startBus() raises BUS_LIMIT_* for the run; the per-connection quotas stay on.
'use strict';

const { performance } = require('node:perf_hooks');
const { som } = require('@bus/schemas');
const { machine, percentile, provisionWorkspace, startBus, storyMessage } = require('./support');

const RATE = Number(process.env.BENCH_RATE ?? 200);
const RUN_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
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

/**
 * The bus calls the bench makes, each stamped with the monotonic time its answer arrived. A call that
 * fails on the network answers status 0 and is counted in `networkErrors`, so one reset connection
 * neither stops the run nor goes unreported.
 */
function busClient(busUrl, workspace, producers, consumer) {
  const consumerBase = `${busUrl}/v1/tenants/${workspace}/consumers/${consumer.clientId}`;
  const json = (token) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });
  const client = { networkErrors: 0 };
  const call = async (url, init) => {
    try {
      const res = await fetch(url, init);
      const body = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text();
      return { status: res.status, body, retryAfter: Number(res.headers.get('retry-after') ?? 1) };
    } catch {
      client.networkErrors += 1;
      return { status: 0, body: undefined, retryAfter: 1 };
    }
  };
  client.publish = async (i, correlationId) => {
    const { messageId, body } = storyMessage(correlationId);
    const startedAt = now();
    const res = await call(`${busUrl}/v1/tenants/${workspace}/messages`, { method: 'POST', headers: json(producers[i % producers.length].token), body });
    // Wall-clock too, to compare with the enqueued_at that Postgres stamps (same machine, same clock).
    return { messageId, status: res.status, startedAt, acceptedAt: now(), acceptedWall: Date.now() };
  };
  client.receive = async (waitSeconds) => {
    const res = await call(`${consumerBase}/messages?max_messages=10&wait_seconds=${waitSeconds}`, { headers: json(consumer.token) });
    return { ...res, at: now(), messages: res.status === 200 ? res.body.messages : [] };
  };
  client.ack = async (handles) => {
    const res = await call(`${consumerBase}/ack`, { method: 'POST', headers: json(consumer.token), body: JSON.stringify({ receipt_handles: handles }) });
    return { ...res, done: res.status === 200 ? res.body.results.filter((r) => r.status === 'done').length : 0 };
  };
  return client;
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

/**
 * (a) Publishes at a steady rate (open loop: each publish starts on its schedule) while one loop
 * receives and acks. The latency is split at the delivery row's enqueued_at: 202 → enqueued is
 * delivery (Kafka consumer, acceptance check, insert), enqueued → received is the pull API.
 */
async function publishToReceivable(api, db, consumerId) {
  const total = RATE * (WARM_UP_SECONDS + RUN_SECONDS);
  const measuredFrom = RATE * WARM_UP_SECONDS;
  const published = new Map();
  const received = new Map();
  const acks = [];
  let publishing = true;
  let refused = 0;

  const consumer = (async () => {
    const deadline = now() + (WARM_UP_SECONDS + RUN_SECONDS) * 1000 + PHASE_TIMEOUT_MS;
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
  })();

  const t0 = now();
  const inFlight = new Set();
  for (let i = 0; i < total; i++) {
    const delay = t0 + (i * 1000) / RATE - now();
    if (delay > 0) await sleep(delay);
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const publish = api.publish(i, `bench-${i % CORRELATION_IDS}`).then((p) => {
      inFlight.delete(publish);
      if (p.status === 202) published.set(p.messageId, { ...p, measured: i >= measuredFrom });
      else refused += 1;
    });
    inFlight.add(publish);
  }
  await Promise.all(inFlight);
  const achievedRate = total / ((now() - t0) / 1000);
  publishing = false;
  await consumer;
  await Promise.all(acks);

  const rows = await db('deliveries').where({ consumer_id: consumerId }).select('message_id', 'enqueued_at');
  const enqueuedAt = new Map(rows.map((r) => [r.message_id, new Date(r.enqueued_at).getTime()]));
  const fromAccepted = [];
  const fromStart = [];
  const toEnqueued = [];
  const enqueuedToReceived = [];
  let lost = 0;
  for (const [id, p] of published) {
    if (!p.measured) continue;
    const got = received.get(id);
    if (got === undefined) lost += 1;
    else {
      fromAccepted.push(got.at - p.acceptedAt);
      fromStart.push(got.at - p.startedAt);
      toEnqueued.push(enqueuedAt.get(id) - p.acceptedWall);
      enqueuedToReceived.push(got.wall - enqueuedAt.get(id));
    }
  }
  return {
    achievedRate,
    fromAccepted: stats(fromAccepted),
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

/** (c) Pre-fills the consumer's queue, waits until delivery enqueued it all, then receives + acks it. */
async function receiveAndAck(api, db, consumerId) {
  let next = 0;
  const prefill = async () => {
    while (next < BACKLOG) {
      const i = next++;
      const p = await api.publish(i, `backlog-${i % CORRELATION_IDS}`);
      if (p.status !== 202) throw new Error(`pre-fill publish answered ${p.status}`);
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
  const started = now();
  const deadline = started + PHASE_TIMEOUT_MS;
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
        break;
      }
      limited += 1;
      await sleep(a.retryAfter * 1000);
    }
  }
  const seconds = (now() - started) / 1000;
  return { backlog, acked, perSecond: acked / seconds, seconds, callsPerSecond: calls / seconds, limited };
}

async function main() {
  const bench = await startBus('bench-e2e');
  try {
    const { workspace, producers, consumers } = await provisionWorkspace(bench, {
      systemId: som.examples['story.context'].system_id,
      messageTypes: Object.keys(som.examples),
      producers: PRODUCERS,
      consumers: 1,
    });
    const api = busClient(bench.busUrl, workspace, producers, consumers[0]);
    const latency = await publishToReceivable(api, bench.db, consumers[0].clientId);
    const wake = await longPollWakeUp(api);
    const drain = await receiveAndAck(api, bench.db, consumers[0].clientId);

    const ms = (v) => (v === undefined ? '—' : v.toFixed(1));
    console.log(`\nEnd-to-end benchmark — ${machine()}; all-in-one on 127.0.0.1, BUS_LIMIT_* raised for the run, workspace on the custom tier 200/s\n`);
    console.log(`Network errors (calls that got no answer): ${api.networkErrors}\n`);
    console.log('| measure | n | p50 ms | p99 ms | max ms | notes |');
    console.log('|---|---|---|---|---|---|');
    const row = (name, s, notes) => console.log(`| ${name} | ${s.count} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ${notes} |`);
    const steady = `${RATE} msg/s asked, ${latency.achievedRate.toFixed(0)} achieved, ${RUN_SECONDS} s measured after ${WARM_UP_SECONDS} s warm-up; ${latency.refused} not 202, ${latency.lost} never received`;
    row('(a) publish 202 → received', latency.fromAccepted, steady);
    row('(a) publish start → received', latency.fromStart, 'same messages');
    row('(a) of which publish 202 → enqueued (delivery)', latency.toEnqueued, 'wall clock, enqueued_at from Postgres');
    row('(a) of which enqueued → received (pull API)', latency.enqueuedToReceived, 'wall clock');
    row('(b) long-poll wake-up: publish 202 → receive answered', wake.fromAccepted, `receive parked ${PARK_MS} ms before the publish; ${wake.missed} missed`);
    row('(b) long-poll wake-up: publish start → receive answered', wake.fromStart, 'same trials');
    console.log('\n| measure | messages | seconds | messages/s | calls/s | 429s |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| (c) receive + ack, batches of 10, one consumer, one call at a time | ${drain.acked} of ${drain.backlog} | ${drain.seconds.toFixed(1)} | ${drain.perSecond.toFixed(0)} | ${drain.callsPerSecond.toFixed(0)} | ${drain.limited} |`,
    );
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
