// Benchmark of publishing (`npm run bench:publish`; needs the local stack: deploy/local/stack.sh up).
// Not a test: the figures depend on the machine, so nothing here passes or fails.
//
// Starts the real all-in-one process on a database of its own, provisions one workspace with
// PRODUCERS producer connections on the custom ceiling (200/s each, × BENCH_CONNECTION_FACTOR: support.js), and POSTs ~2 KB story.context
// messages at a fixed concurrency over HTTP: bearer auth, limits, parse, idempotency, validation,
// policy and the Postgres transaction holding the story lock across an acks=all Kafka send. The bus
// host's own limits (200/s for the whole API) are widened for the run, or they would be what is
// measured. Then, as the ceiling, a raw kafkajs acks=all send of the same bytes at the same concurrency;
// with one caller also the floor, a publish's round trips made with raw clients (bench/round-trips.js).
// BENCH_CONCURRENCY callers (64); BENCH_PAUSE_MS (0) makes each caller pause between its publishes, e.g.
// 20 with one caller: a lone publish on a bus that is idle when it arrives. BENCH_LAYOUT=standalone
// runs auth, gateway, delivery and pull-api as separate processes (as in Kubernetes) instead of the
// all-in-one, so the gateway has a JS thread of its own. BENCH_ROUTE=validate POSTs to the validate
// route instead (a dry run: nothing reaches Kafka, so there is no producer ceiling; its raw baseline is
// the floor of its own round trips, at any concurrency). Postgres' figures per statement of the run
// (pg_stat_statements) follow the table. Each phase warms up for BENCH_WARM_UP_SECONDS (15) before
// BENCH_SECONDS (15) measured. BENCH_CPU_PROF=<dir> has the bus write V8 CPU profiles there
// (bench/profile-summary.js), BENCH_PERF=<dir> records each measured phase with perf
// (bench/perf-summary.js), BENCH_ALLOC=<dir> samples the bus processes' allocations over the measured
// publishes (bench/alloc-summary.js), BENCH_NODE_FLAGS adds node or V8 flags to the bus's processes.
'use strict';

const { randomBytes } = require('node:crypto');
const { som } = require('@bus/schemas');
const { ensureTopics, sendAcked } = require('@bus/kafka');
const { openRoundTrips } = require('./round-trips');
const { machineProbe, probeLine } = require('./machine-probe');
const {
  CONNECTION_FACTOR,
  cpuLine,
  cpuMeter,
  httpClient,
  machine,
  measure,
  perfRecorder,
  allocRecorder,
  recorders,
  provisionWorkspace,
  startBus,
  statementTable,
  storyMessage,
} = require('./support');

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const RUN_MS = Number(process.env.BENCH_SECONDS ?? 15) * 1000;
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 0);
/**
 * The warm-up before each measured phase. V8 keeps compiling the hot path for seconds under this load
 * (its compiler threads competing for the two cores): after a 3 s warm-up a third of the gateway's
 * samples were still in Maglev-tier code and its compiler threads took 7–11 % of its CPU, against a few
 * TurboFan compiles a second after 15–20 s. A long-running bus is past that: 15 s measures it
 * (docs/benchmarks.md, "The warm-up").
 */
const WARM_UP_MS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 15) * 1000;
const PRODUCERS = 8;
const LAYOUT = process.env.BENCH_LAYOUT ?? 'all-in-one';
const ROUTE = process.env.BENCH_ROUTE ?? 'messages';
if (ROUTE !== 'messages' && ROUTE !== 'validate') throw new Error(`BENCH_ROUTE must be messages or validate, not ${ROUTE}`);

/** A ~2 KB story.context message over 256 correlation ids, a fresh message_id per call. */
const messageOf = (i) => storyMessage(`bench-${i % 256}`).body;

/** bench/round-trips.js measured like the publish (same warm-up and length, one caller), with each step's p50. */
async function roundTripsFloor(bench, topic) {
  const trips = await openRoundTrips({ databaseUrl: bench.databaseUrl, redisUrl: process.env.REDIS_URL, producer: bench.producer, topic, route: ROUTE });
  try {
    const floor = await measure({
      cpu: cpuMeter({ bench: process.pid }),
      concurrency: 1,
      warmUpMs: WARM_UP_MS,
      runMs: RUN_MS,
      operation: async (i) => {
        await trips.chain(i, messageOf(i));
        return true;
      },
    });
    return { ...floor, steps: trips.stepMedians(floor.count) };
  } finally {
    await trips.close();
  }
}

async function main() {
  // Before the bus starts, on a machine with nothing of the run busy yet.
  const probe = await machineProbe(messageOf(0));
  const bench = await startBus('bench-publish', { layout: LAYOUT });
  const { kafka, producer } = bench;
  const gatewayUrl = bench.urls.gateway;
  const busPids = Object.fromEntries(Object.entries(bench.processes).map(([name, p]) => [name, p.child.pid]));
  try {
    const { workspace, producers } = await provisionWorkspace(bench, {
      systemId: som.examples['story.context'].system_id,
      messageTypes: Object.keys(som.examples),
      producers: PRODUCERS,
    });
    const tokens = producers.map((p) => p.token);
    const sample = messageOf(0);

    const request = httpClient();
    const statementsBefore = await bench.statements.sample();
    const phase = ROUTE === 'messages' ? 'publish' : ROUTE;
    const publishCpu = cpuMeter({ ...busPids, bench: process.pid });
    const publish = await measure({
      cpu: publishCpu,
      recorder: recorders(perfRecorder(phase, publishCpu), allocRecorder(phase, bench.processes)),
      concurrency: CONCURRENCY,
      warmUpMs: WARM_UP_MS,
      runMs: RUN_MS,
      pauseMs: PAUSE_MS,
      operation: async (i) => {
        const res = await request(`${gatewayUrl}/v1/tenants/${workspace}/${ROUTE}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tokens[i % PRODUCERS]}`, 'Content-Type': 'application/json' },
          body: messageOf(i),
        });
        return res.status === 202;
      },
    });

    const statements = bench.statements.costs(statementsBefore, await bench.statements.sample());
    const steps = await routeSteps(gatewayUrl);

    const topic = `bench.raw.${randomBytes(4).toString('hex')}`;
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.connect();
    await ensureTopics(kafkaAdmin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    // A publish's ceiling: a raw acks=all send of the same bytes at the same concurrency. A validate sends nothing.
    const rawCpu = cpuMeter({ bench: process.pid });
    const raw =
      ROUTE === 'messages'
        ? await measure({
            cpu: rawCpu,
            recorder: perfRecorder('raw-send', rawCpu),
            concurrency: CONCURRENCY,
            warmUpMs: WARM_UP_MS,
            runMs: RUN_MS,
            operation: async (i) => {
              await sendAcked(producer, { topic, key: `${workspace}/bench-${i % 256}`, value: messageOf(i), headers: {} });
              return true;
            },
          })
        : undefined;
    // A lone call's floor: its round trips with raw clients, one after another (bench/round-trips.js).
    const floor = CONCURRENCY === 1 || !raw ? await roundTripsFloor(bench, topic) : undefined;
    await kafkaAdmin.deleteTopics({ topics: [topic] });
    await kafkaAdmin.disconnect();

    const row = (name, r) => `| ${name} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.failures} |`;
    console.log(
      `\nPublish benchmark — ${machine()}; ${CONCURRENCY} concurrent, ${RUN_MS / 1000} s measured, message ${sample.length} bytes; BUS_LIMIT_CONNECTION_FACTOR ${CONNECTION_FACTOR}\n`,
    );
    console.log(`${probeLine(probe)}\n`);
    console.log('| path | per second | p50 ms | p99 ms | not 202 / failed |');
    console.log('|---|---|---|---|---|');
    console.log(row(`POST /v1/tenants/{t}/${ROUTE} (${LAYOUT})`, publish));
    if (raw) console.log(row('raw kafkajs send, acks=all (ceiling)', raw));
    if (floor) console.log(row(`raw round trips of one ${ROUTE} call, one after another (floor: bench/round-trips.js)`, floor));
    if (raw) console.log(`\nRatio to the raw producer ceiling: ${(publish.perSecond / raw.perSecond).toFixed(3)}`);
    if (floor) console.log(`\np50 against the raw round trips' p50: ${(publish.p50 / floor.p50).toFixed(2)}×; the floor's steps (p50 ms): ${floor.steps}`);
    const baselineCpu = raw ? `; raw send: ${cpuLine(raw.cpuPerThousand)}` : `; floor: ${cpuLine(floor.cpuPerThousand)}`;
    console.log(`CPU ms per 1,000 messages — ${ROUTE}: ${cpuLine(publish.cpuPerThousand)}${baselineCpu}`);
    if (raw) {
      // Both phases keep the machine's cores about as busy, so the ratio above is close to this one:
      // what a raw send costs the machine against what a publish costs it (docs/benchmarks.md, "The ratio
      // is a CPU ratio").
      const total = (perThousand) => Object.values(perThousand).reduce((sum, ms) => sum + ms, 0);
      const [bus, ceiling] = [total(publish.cpuPerThousand), total(raw.cpuPerThousand)];
      console.log(
        `CPU µs per message, all the processes above: publish ${bus.toFixed(0)}, raw send ${ceiling.toFixed(0)} (raw / publish ${(ceiling / bus).toFixed(3)})`,
      );
    }
    console.log(`Mean per call (warm-up included), from the gateway's /metrics: ${steps}`);
    console.log(`\nPostgres per statement, ${ROUTE}:\n\n${statementTable(statements)}`);
  } finally {
    await bench.stop();
  }
}

/**
 * The mean time of each Server-Timing step of the route and, for publishes, the mean group-commit
 * batch size, from the bus's own histograms (bus_request_step_seconds, bus_publish_batch_size).
 */
async function routeSteps(gatewayUrl) {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  const value = (pattern) => Number(new RegExp(`^${pattern} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
  const route = `route="/v1/tenants/:t/${ROUTE}"`;
  const parts = ['limits', 'auth', 'quota', 'body', 'validate', 'policy', ROUTE === 'messages' ? 'commit' : 'dry_run'].map((step) => {
    const labels = `\\{app="(?:bus|gateway)",${route},step="${step}"\\}`;
    const mean = (value(`bus_request_step_seconds_sum${labels}`) / value(`bus_request_step_seconds_count${labels}`)) * 1000;
    return `${step} ${mean.toFixed(2)} ms`;
  });
  if (ROUTE === 'validate') return parts.join(', ');
  const batch = value('bus_publish_batch_size_sum') / value('bus_publish_batch_size_count');
  return `${parts.join(', ')}; batch of ${batch.toFixed(1)} publishes on average`;
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
