// Soak benchmark: does anything grow with time under steady traffic? (`npm run bench:soak`; needs the
// local stack: deploy/local/stack.sh up). Not a test: nothing passes or fails, and it stops by itself
// (bounded in minutes and messages; loopback only).
//
// Starts the real bus on a database of its own (the all-in-one process; BENCH_LAYOUT=standalone for
// separate processes) and runs, for BENCH_SOAK_MINUTES (10), the traffic of a working test bench:
// BENCH_RATE (100) msg/s in stories of STORY_LENGTH messages (a new correlation id every ten, so open
// stories keep growing), one refused publish every REFUSED_EVERY, CONSUMERS consumers receiving and
// acking (one of them nacks every NACK_EVERY-th batch for redelivery), and every connection fetching a
// new token every TOKEN_EVERY_SECONDS. Every SAMPLE_SECONDS it reads each bus process's /metrics (the
// resident set, V8's old space, the event loop's p99 lag), and each minute the bench database's size,
// its open Postgres connections and the run's Redis keys.
//
// Per minute it prints those figures and 202 → received p99; at the end the last minute's ratio to the
// second (the baseline of the same run: the first is warm-up), the lowest old space of the last
// WINDOW_MINUTES against that of the WINDOW_MINUTES from the second (the troughs after V8's major
// collections: what survives them), deliveries never received, and CPU ms per 1,000 messages of each
// process.
'use strict';

const { performance } = require('node:perf_hooks');
const { randomUUID } = require('node:crypto');
const Redis = require('ioredis');
const { som } = require('@bus/schemas');
const { busClient, cpuLine, cpuMeter, machine, percentile, provisionWorkspace, publishAtRate, startBus } = require('./support');

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const LAYOUT = process.env.BENCH_LAYOUT ?? 'all-in-one';
const CONSUMERS = 4;
const PRODUCERS = 4;
const STORY_LENGTH = 10;
const REFUSED_EVERY = 20;
const NACK_EVERY = 10;
const TOKEN_EVERY_SECONDS = 60;
const SAMPLE_SECONDS = 2;
/** Minutes whose lowest old space is compared: a major collection's trough shows within a few. */
const WINDOW_MINUTES = 3;
// Upper bound of the wait for the last deliveries after the last publish, so the bench always ends.
const DRAIN_TIMEOUT_MS = 120_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();
const mb = (bytes) => bytes / 2 ** 20;

/** The figures this bench reads from a Prometheus text answer, by metric (first sample of each). */
function metricsOf(text) {
  const wanted = {
    rss: /^process_resident_memory_bytes (\S+)$/m,
    oldSpace: /^nodejs_heap_space_size_used_bytes\{space="old"\} (\S+)$/m,
    lagP99: /^nodejs_eventloop_lag_p99_seconds (\S+)$/m,
  };
  return Object.fromEntries(Object.entries(wanted).map(([name, pattern]) => [name, Number(pattern.exec(text)?.[1] ?? NaN)]));
}

async function fetchToken(api, connection) {
  const res = await api.call(`${api.tokenUrl}`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${connection.clientId}:${connection.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (res.status === 200) connection.token = res.body.access_token;
  return res.status;
}

async function main() {
  const bench = await startBus(`bench-soak-${LAYOUT}`, { layout: LAYOUT });
  const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const pids = Object.fromEntries(Object.entries(bench.processes).map(([name, p]) => [name, p.child.pid]));
    const cpu = cpuMeter({ ...pids, bench: process.pid });
    const { workspace, producers, consumers } = await provisionWorkspace(bench, {
      systemId: som.examples['story.context'].system_id,
      messageTypes: Object.keys(som.examples),
      producers: PRODUCERS,
      consumers: CONSUMERS,
    });
    const apis = consumers.map((consumer) => busClient(bench.urls, workspace, producers, consumer));
    for (const api of apis) api.tokenUrl = `${bench.urls.auth}/v1/oauth/token`;
    const publisher = apis[0];
    const run = randomUUID().slice(0, 8);
    const total = RATE * MINUTES * 60;
    const published = new Map();
    const received = apis.map(() => new Map());
    const statuses = { refusedAsAsked: 0, refusedOther: 0, tokens: {} };
    let publishing = true;
    let drainDeadline = Infinity;
    const t0 = now();
    const minuteOf = (at) => Math.floor((at - t0) / 60_000);

    const receiveLoop = async (api, got, nacks) => {
      let batches = 0;
      while ((publishing || got.size < published.size) && now() < drainDeadline) {
        const r = await api.receive(2);
        if (r.status === 429) {
          await sleep(r.retryAfter * 1000);
          continue;
        }
        if (r.messages.length === 0) continue;
        batches += 1;
        const handles = r.messages.map((m) => m.receipt_handle);
        if (nacks && batches % NACK_EVERY === 0) {
          await api.nack(handles);
          continue;
        }
        for (const m of r.messages) if (!got.has(m.message_id)) got.set(m.message_id, r.at);
        await api.ack(handles);
      }
    };

    // The refused publish: a story.context without its payload (400, schema) from the same producers.
    const refusedBody = (i) =>
      JSON.stringify({ ...som.examples['story.context'], message_id: randomUUID(), correlation_id: `soak-${run}-refused-${i}`, payload: undefined });
    const refusePublish = (i) =>
      publisher
        .call(`${bench.urls.gateway}/v1/tenants/${workspace}/messages`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${producers[i % PRODUCERS].token}`, 'Content-Type': 'application/json' },
          body: refusedBody(i),
        })
        .then((res) => (res.status >= 400 && res.status < 500 && res.status !== 429 ? (statuses.refusedAsAsked += 1) : (statuses.refusedOther += 1)));

    const tokenRefresh = setInterval(() => {
      for (const connection of [...producers, ...consumers])
        void fetchToken(publisher, connection).then((status) => (statuses.tokens[status] = (statuses.tokens[status] ?? 0) + 1));
    }, TOKEN_EVERY_SECONDS * 1000);

    // Sampling: each process's metrics every SAMPLE_SECONDS; storage each minute.
    const samples = [];
    const storage = [];
    const metricsUrls = Object.fromEntries(Object.keys(bench.processes).map((name) => [name, `${bench.own[name]}/metrics`]));
    const sampleMetrics = async () => {
      const at = now();
      for (const [name, url] of Object.entries(metricsUrls)) {
        const res = await fetch(url).catch(() => undefined);
        if (res?.ok) samples.push({ minute: minuteOf(at), process: name, ...metricsOf(await res.text()) });
      }
    };
    const redisKeys = async () => {
      let cursor = '0';
      let keys = 0;
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${bench.databaseName}*`, 'COUNT', 1000);
        cursor = next;
        keys += batch.length;
      } while (cursor !== '0');
      return keys;
    };
    const sampleStorage = async () => {
      const minute = minuteOf(now());
      const { rows } = await bench.db.raw(
        `SELECT pg_database_size(current_database())::float8 AS bytes,
                (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database())::int AS connections`,
      );
      storage.push({ minute, bytes: rows[0].bytes, connections: rows[0].connections, redisKeys: await redisKeys() });
    };
    let sampling = true;
    const sampler = (async () => {
      for (let tick = 0; sampling; tick++) {
        await sampleMetrics();
        if (tick % (60 / SAMPLE_SECONDS) === 0) await sampleStorage();
        await sleep(SAMPLE_SECONDS * 1000);
      }
    })();

    const consuming = Promise.all(apis.map((api, i) => receiveLoop(api, received[i], i === 0)));
    const cpuBefore = cpu.sample();
    const { refused, achievedRate } = await publishAtRate(publisher, {
      rate: RATE,
      total,
      correlationId: (i) => `soak-${run}-${Math.floor(i / STORY_LENGTH)}`,
      published,
      beforePublish: async (i) => {
        if (i % REFUSED_EVERY === 0) void refusePublish(i);
      },
    });
    publishing = false;
    drainDeadline = now() + DRAIN_TIMEOUT_MS;
    await consuming;
    const cpuPerThousand = cpu.perThousand(cpuBefore, cpu.sample(), published.size);
    clearInterval(tokenRefresh);
    sampling = false;
    await sampler;
    await sampleStorage();

    // Per minute: 202 → received p99 of the messages published in it, and the samples.
    const minutes = Array.from({ length: MINUTES }, (_, m) => m);
    const latencies = minutes.map(() => []);
    let lost = 0;
    for (const [id, p] of published) {
      const minute = minuteOf(p.startedAt);
      for (const got of received) {
        const at = got.get(id);
        if (at === undefined) lost += 1;
        else latencies[Math.min(minute, MINUTES - 1)].push(at - p.acceptedAt);
      }
    }
    const processNames = Object.keys(metricsUrls);
    const figure = (minute, name, key, pick) => pick(samples.filter((s) => s.minute === minute && s.process === name).map((s) => s[key]));
    const lowest = (values) => (values.length === 0 ? NaN : Math.min(...values));
    const highest = (values) => (values.length === 0 ? NaN : Math.max(...values));
    const rows = minutes.map((minute) => {
      const sorted = latencies[minute].sort((a, b) => a - b);
      const store = storage.find((s) => s.minute === minute) ?? storage[storage.length - 1];
      return {
        minute,
        p99: sorted.length > 0 ? percentile(sorted, 99) : NaN,
        perProcess: Object.fromEntries(
          processNames.map((name) => [
            name,
            {
              rss: mb(figure(minute, name, 'rss', highest)),
              oldSpace: mb(figure(minute, name, 'oldSpace', lowest)),
              lagP99: figure(minute, name, 'lagP99', highest) * 1000,
            },
          ]),
        ),
        ...store,
      };
    });

    console.log(`\nSoak benchmark, ${LAYOUT} — ${machine()}; ${RATE} msg/s asked for ${MINUTES} min (achieved ${achievedRate.toFixed(0)}), on 127.0.0.1\n`);
    const processColumns = processNames.map((n) => `${n}: RSS MB / old space MB (lowest) / loop lag p99 ms`).join(' | ');
    console.log(`| minute | 202 → received p99 ms | ${processColumns} | database MB | Postgres connections | Redis keys |`);
    console.log(`|---|---|${processNames.map(() => '---|').join('')}---|---|---|`);
    for (const r of rows) {
      const perProcess = processNames
        .map((n) => `${r.perProcess[n].rss.toFixed(0)} / ${r.perProcess[n].oldSpace.toFixed(1)} / ${r.perProcess[n].lagP99.toFixed(1)}`)
        .join(' | ');
      console.log(`| ${r.minute + 1} | ${r.p99.toFixed(1)} | ${perProcess} | ${mb(r.bytes).toFixed(0)} | ${r.connections} | ${r.redisKeys} |`);
    }
    const baseline = rows[Math.min(1, rows.length - 1)];
    const last = rows[rows.length - 1];
    console.log(`\nLast minute ÷ minute ${baseline.minute + 1} (the baseline): 202 → received p99 ${(last.p99 / baseline.p99).toFixed(2)}`);
    const lowestOldSpace = (name, from, to) =>
      mb(lowest(samples.filter((x) => x.process === name && x.minute >= from && x.minute < to).map((x) => x.oldSpace)));
    for (const name of processNames) {
      const first = lowestOldSpace(name, baseline.minute, baseline.minute + WINDOW_MINUTES);
      const end = lowestOldSpace(name, MINUTES - WINDOW_MINUTES, MINUTES);
      console.log(
        `- ${name}: RSS ${(last.perProcess[name].rss / baseline.perProcess[name].rss).toFixed(2)}, loop lag p99 ${(last.perProcess[name].lagP99 / baseline.perProcess[name].lagP99).toFixed(2)}; lowest old space, last ${WINDOW_MINUTES} minutes ÷ minutes ${baseline.minute + 1}–${baseline.minute + WINDOW_MINUTES}: ${end.toFixed(1)} ÷ ${first.toFixed(1)} MB = ${(end / first).toFixed(2)}`,
      );
    }
    console.log(
      `- Postgres connections ${baseline.connections} → ${last.connections}; Redis keys ${baseline.redisKeys} → ${last.redisKeys}; database ${mb(baseline.bytes).toFixed(0)} → ${mb(last.bytes).toFixed(0)} MB (stored messages and deliveries grow until retention sweeps them)`,
    );
    console.log(
      `\n${published.size} accepted, ${refused} not accepted; refused as asked ${statuses.refusedAsAsked}, otherwise ${statuses.refusedOther}; tokens by status ${JSON.stringify(statuses.tokens)}; deliveries never received ${lost}; network errors ${apis.reduce((sum, api) => sum + api.networkErrors, 0)}`,
    );
    console.log(`\nCPU ms per 1,000 messages: ${cpuLine(cpuPerThousand)}`);
  } finally {
    redis.disconnect();
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
