// Queue counts under a client asking in a loop (`npm run bench:counts`; needs the local stack:
// deploy/local/stack.sh up). Not a test: nothing passes or fails, and it stops by itself (every loop
// bounded in time; loopback only).
//
// Starts the all-in-one bus on a database of its own with two consumers in two workspaces. The first's
// queue is filled to BENCH_COUNTS_DEPTH (1,000,000) un-acked deliveries straight through the delivery
// store (stories of 10); the second's stays empty. Then, for BENCH_SECONDS (20) each, alternately quiet
// and loud: the second consumer's empty receive (wait_seconds=0) in a loop, timed, while in the loud
// phases BENCH_COUNTS_LOOPS (10) loops ask the first consumer's state (GET /v1/tenants/{t}/consumers/{c},
// whose counts read every un-acked row). It prints the receive's p50 / p99 and their ratio to the quiet
// phase before (the baseline of the same run), the state answers and their p50, and the cores each
// process kept busy: the pacing of a consumer's counts (docs/delivery.md, "Queue counts") is what keeps
// the other consumer's receive near its quiet figures.
'use strict';

const { performance } = require('node:perf_hooks');
const { som } = require('@bus/schemas');
const { busClient, cpuMeter, directEnqueuer, httpClient, machine, percentile, provisionWorkspace, startBus } = require('./support');

const DEPTH = Number(process.env.BENCH_COUNTS_DEPTH ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const LOOPS = Number(process.env.BENCH_COUNTS_LOOPS ?? 10);
const STORY_LENGTH = 10;
const FILL_BATCH = 500;

async function fill(bench, workspaceId) {
  // Offsets far past the shared topic's: these records never were in Kafka.
  const enqueue = directEnqueuer(bench.db, { firstOffset: 1e12, batch: FILL_BATCH });
  await enqueue(
    workspaceId,
    Array.from({ length: DEPTH }, (_, i) => `counts-${Math.floor(i / STORY_LENGTH)}`),
  );
  await bench.db.raw('VACUUM ANALYZE deliveries');
}

async function main() {
  const bench = await startBus('bench-counts');
  try {
    const options = { systemId: som.examples['story.context'].system_id, messageTypes: Object.keys(som.examples), producers: 1, consumers: 1 };
    const deep = await provisionWorkspace(bench, options);
    const other = await provisionWorkspace(bench, options);
    const filledFrom = performance.now();
    await fill(bench, deep.workspace);
    process.stderr.write(`filled ${DEPTH} deliveries in ${((performance.now() - filledFrom) / 1000).toFixed(0)} s\n`);

    const request = httpClient();
    const stateUrl = `${bench.urls.pullApi}/v1/tenants/${deep.workspace}/consumers/${deep.consumers[0].clientId}`;
    const stateHeaders = { Authorization: `Bearer ${deep.consumers[0].token}` };
    const receiver = busClient(bench.urls, other.workspace, other.producers, other.consumers[0]);
    const cpu = cpuMeter({ bus: bench.processes['all-in-one'].child.pid, bench: process.pid });

    const phase = async (loud) => {
      let stopped = false;
      const asks = [];
      const statuses = {};
      const askLoops = loud
        ? Array.from({ length: LOOPS }, async () => {
            while (!stopped) {
              const startedAt = performance.now();
              const res = await request(stateUrl, { headers: stateHeaders });
              asks.push(performance.now() - startedAt);
              statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            }
          })
        : [];
      const receives = [];
      const before = cpu.sample();
      const end = performance.now() + SECONDS * 1000;
      while (performance.now() < end) {
        const startedAt = performance.now();
        const r = await receiver.receive(0);
        if (r.status !== 200) throw new Error(`the other consumer's receive answered ${r.status}`);
        receives.push(performance.now() - startedAt);
      }
      stopped = true;
      await Promise.all(askLoops);
      const after = cpu.sample();
      const sorted = receives.sort((a, b) => a - b);
      const cores = cpu.coresBusy(before, after, SECONDS);
      return { loud, receives: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), asks: asks.sort((a, b) => a - b), statuses, cores };
    };

    const results = [];
    for (const loud of [false, true, false, true]) results.push(await phase(loud));
    console.log(
      `\nQueue counts under a looping client, all-in-one — ${machine()}; ${DEPTH} un-acked in one queue, ${LOOPS} loops asking its state, ${SECONDS} s a phase\n`,
    );
    console.log(
      "| phase | other consumer's empty receives | p50 / p99 ms | ÷ the quiet phase before | state answers (status: count) | state p50 ms | cores busy |",
    );
    console.log('|---|---|---|---|---|---|---|');
    let quiet;
    for (const r of results) {
      if (!r.loud) quiet = r;
      const ratio = r.loud ? `${(r.p50 / quiet.p50).toFixed(2)} / ${(r.p99 / quiet.p99).toFixed(2)}` : '1 / 1';
      const cores = Object.entries(r.cores)
        .map(([name, busy]) => `${name} ${busy.toFixed(2)}`)
        .join(', ');
      const asked = r.loud ? JSON.stringify(r.statuses) : '—';
      const askP50 = r.asks.length > 0 ? percentile(r.asks, 50).toFixed(0) : '—';
      console.log(`| ${r.loud ? 'loud' : 'quiet'} | ${r.receives} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${ratio} | ${asked} | ${askP50} | ${cores} |`);
    }
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
