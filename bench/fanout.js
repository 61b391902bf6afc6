// Fan-out benchmark: one stream of messages delivered to many consumers (`npm run bench:fanout`; needs
// the local stack: deploy/local/stack.sh up). Not a test: the figures depend on the machine, so nothing
// here passes or fails, and it stops by itself (every loop is bounded in count and time; loopback only).
//
// Starts the real bus on a database of its own (the all-in-one process; BENCH_LAYOUT=standalone for
// separate processes) and, for each consumer count in BENCH_FANOUT_CONSUMERS (1 and 50), provisions a
// workspace of its own with PRODUCERS producer connections and that many consumer connections. It
// publishes at BENCH_RATE (100) msg/s for BENCH_SECONDS (30) after a warm-up while every consumer
// long-polls (one loop each, as one test harness per consumer would) and acks each batch alongside its
// next receive. Per delivery (one message to one consumer) it prints:
// - publish 202 → received p50 / p99, and the p99 of the first and last 10 s (a backlog grows the last);
// - WAL bytes (pg_current_wal_lsn before and after: the whole server's, so run it on a quiet stack) and
//   Postgres CPU ms (every backend of the shared server) per delivery, with the consumer count of 1 as
//   the baseline of the same run: each message's own writes (its stored body, its idempotency record)
//   are shared by its deliveries, so at 50 consumers the figure is the deliveries' own cost;
// - Postgres' statements of the phase (pg_stat_statements) and CPU ms per 1,000 deliveries per process.
'use strict';

const { performance } = require('node:perf_hooks');
const { som } = require('@bus/schemas');
const { busClient, cpuLine, cpuMeter, machine, percentile, provisionWorkspace, publishAtRate, startBus, statementTable } = require('./support');

const RATE = Number(process.env.BENCH_RATE ?? 100);
const RUN_SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONSUMER_COUNTS = (process.env.BENCH_FANOUT_CONSUMERS ?? '1,50').split(',').map(Number);
const LAYOUT = process.env.BENCH_LAYOUT ?? 'all-in-one';
const WARM_UP_SECONDS = 2;
const EDGE_SECONDS = 10;
const PRODUCERS = 4;
const CORRELATION_IDS = 256;
const MAX_IN_FLIGHT = 64;
// Upper bound of the wait for the last deliveries after the last publish, so the bench always ends.
const DRAIN_TIMEOUT_MS = 120_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function walPosition(db) {
  const { rows } = await db.raw('SELECT pg_current_wal_lsn()::text AS lsn');
  return rows[0].lsn;
}

async function walBytesSince(db, from) {
  const { rows } = await db.raw('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::float8 AS bytes', [from]);
  return rows[0].bytes;
}

/** One phase: `consumerCount` consumers of a new workspace, RATE msg/s for RUN_SECONDS. */
async function phase(bench, consumerCount, cpu) {
  const { workspace, producers, consumers } = await provisionWorkspace(bench, {
    systemId: som.examples['story.context'].system_id,
    messageTypes: Object.keys(som.examples),
    producers: PRODUCERS,
    consumers: consumerCount,
  });
  const apis = consumers.map((consumer) => busClient(bench.urls, workspace, producers, consumer));
  const publisher = apis[0];
  const total = RATE * (WARM_UP_SECONDS + RUN_SECONDS);
  const measuredFrom = RATE * WARM_UP_SECONDS;
  const published = new Map();
  const received = apis.map(() => new Map());
  let publishing = true;
  let drainDeadline = Infinity;

  const receiveLoop = async (api, got) => {
    const acks = [];
    while ((publishing || got.size < published.size) && now() < drainDeadline) {
      const r = await api.receive(2);
      if (r.status === 429) {
        await sleep(r.retryAfter * 1000);
        continue;
      }
      for (const m of r.messages) if (!got.has(m.message_id)) got.set(m.message_id, r.at);
      if (r.messages.length > 0) acks.push(api.ack(r.messages.map((m) => m.receipt_handle)));
    }
    await Promise.all(acks);
  };

  let wal;
  let cpuBefore;
  let statementsBefore;
  const consuming = Promise.all(apis.map((api, i) => receiveLoop(api, received[i])));
  const { refused, achievedRate } = await publishAtRate(publisher, {
    rate: RATE,
    total,
    correlationId: (i) => `fanout-${i % CORRELATION_IDS}`,
    maxInFlight: MAX_IN_FLIGHT,
    published,
    beforePublish: async (i) => {
      if (i !== measuredFrom) return;
      wal = await walPosition(bench.db);
      cpuBefore = cpu.sample();
      statementsBefore = await bench.statements.sample();
    },
  });
  publishing = false;
  drainDeadline = now() + DRAIN_TIMEOUT_MS;
  await consuming;
  const walBytes = await walBytesSince(bench.db, wal);
  const measured = [...published].filter(([, p]) => p.index >= measuredFrom).map(([id, p]) => [id, { ...p, second: p.second - WARM_UP_SECONDS }]);
  const measuredMessages = measured.length;
  const deliveries = measuredMessages * consumerCount;
  const cpuPerThousand = cpu.perThousand(cpuBefore, cpu.sample(), deliveries);
  const statements = bench.statements.costs(statementsBefore, await bench.statements.sample(), 8);

  const all = [];
  const first = [];
  const last = [];
  let lost = 0;
  const lastSecond = Math.max(...measured.map(([, p]) => p.second));
  for (const [id, p] of measured) {
    for (const got of received) {
      const at = got.get(id);
      if (at === undefined) {
        lost += 1;
        continue;
      }
      all.push(at - p.acceptedAt);
      if (p.second < EDGE_SECONDS) first.push(at - p.acceptedAt);
      if (p.second >= lastSecond - EDGE_SECONDS) last.push(at - p.acceptedAt);
    }
  }
  return {
    consumerCount,
    achievedRate,
    refused,
    lost,
    deliveries,
    latency: stats(all),
    first: stats(first),
    last: stats(last),
    walPerDelivery: walBytes / deliveries,
    postgresMsPerDelivery: cpuPerThousand.postgres / 1000,
    cpuPerThousand,
    statements,
    networkErrors: apis.reduce((sum, api) => sum + api.networkErrors, 0),
  };
}

async function main() {
  const bench = await startBus(`bench-fanout-${LAYOUT}`, { layout: LAYOUT });
  try {
    const cpu = cpuMeter({ ...Object.fromEntries(Object.entries(bench.processes).map(([name, p]) => [name, p.child.pid])), bench: process.pid });
    const results = [];
    for (const consumerCount of CONSUMER_COUNTS) results.push(await phase(bench, consumerCount, cpu));
    const baseline = results[0];
    const ms = (v) => (v === undefined ? '—' : v.toFixed(1));
    console.log(`\nFan-out benchmark, ${LAYOUT} — ${machine()}; ${RATE} msg/s asked for ${RUN_SECONDS} s after ${WARM_UP_SECONDS} s warm-up, on 127.0.0.1\n`);
    console.log(
      `| consumers | deliveries | achieved msg/s | 202 → received p50 / p99 ms | p99 first / last ${EDGE_SECONDS} s | WAL bytes a delivery (÷ ${baseline.consumerCount} consumer${baseline.consumerCount === 1 ? '' : 's'}) | Postgres CPU ms a delivery (÷ baseline) | not 202 / never received / network errors |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of results)
      console.log(
        `| ${r.consumerCount} | ${r.deliveries} | ${r.achievedRate.toFixed(0)} | ${ms(r.latency.p50)} / ${ms(r.latency.p99)} | ${ms(r.first.p99)} / ${ms(r.last.p99)} | ${r.walPerDelivery.toFixed(0)} (${(r.walPerDelivery / baseline.walPerDelivery).toFixed(2)}) | ${r.postgresMsPerDelivery.toFixed(3)} (${(r.postgresMsPerDelivery / baseline.postgresMsPerDelivery).toFixed(2)}) | ${r.refused} / ${r.lost} / ${r.networkErrors} |`,
      );
    for (const r of results) {
      console.log(`\nCPU ms per 1,000 deliveries, ${r.consumerCount} consumer(s): ${cpuLine(r.cpuPerThousand)}`);
      console.log(`\nPostgres per statement, ${r.consumerCount} consumer(s):\n\n${statementTable(r.statements)}`);
    }
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
