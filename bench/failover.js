// Delivery failover (`npm run bench:failover`; needs the local stack: deploy/local/stack.sh up). Not a
// test: the figures depend on the machine, so nothing here passes or fails, and it stops by itself
// (every loop is bounded in count and time; loopback only).
//
// The standalone layout with two delivery processes in one consumer group, on a Kafka broker of the
// bench's own (deploy/local/stack.sh up kafka, with the local stack's broker settings, among them
// group.min.session.timeout.ms: the shared broker may predate them), Postgres and Redis shared. One
// producer publishes at BENCH_RATE (100) msg/s over 256 correlation ids to one consumer connection;
// after BENCH_BEFORE_KILL_SECONDS (8) one delivery process is SIGKILLed, and publishing goes on for
// BENCH_AFTER_KILL_SECONDS (40). Delivered means enqueued in the consumer's queue (enqueued_at, from
// Postgres). Per setting of DELIVERY_SESSION_TIMEOUT (the new default, and the old 30 s as the
// baseline, measured in the same run) it prints the longest 202 → delivered gap, the time from the
// kill until the dead process's partitions deliver again (the latest delivery of a message accepted
// after the kill that waited over a second), whether every accepted message was delivered, and CPU ms per 1,000
// messages of each process over the steady part before the kill (support.js cpuMeter).
'use strict';

const { execFile } = require('node:child_process');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { som } = require('@bus/schemas');
const { busClient, cpuLine, cpuMeter, loadStackEnv, machine, provisionWorkspace, startBus } = require('./support');

const RATE = Number(process.env.BENCH_RATE ?? 100);
const BEFORE_KILL_SECONDS = Number(process.env.BENCH_BEFORE_KILL_SECONDS ?? 8);
const AFTER_KILL_SECONDS = Number(process.env.BENCH_AFTER_KILL_SECONDS ?? 40);
const SETTINGS = [
  { name: 'default (3 s)', env: {} },
  { name: 'baseline 30 s', env: { DELIVERY_SESSION_TIMEOUT: '30s' } },
];
const CORRELATION_IDS = 256;
// At most this many publishes in flight: past it the schedule slips rather than piling up requests.
const MAX_IN_FLIGHT = 64;
// A message accepted after the kill and delivered later than this waited for the takeover.
const STALLED_MS = 1_000;
// Upper bound of the wait for the last messages after publishing stops, so the bench always ends.
const DRAIN_TIMEOUT_MS = 90_000;
const ROOT = path.join(__dirname, '..');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

function stackScript(args, env) {
  return new Promise((resolve, reject) => {
    execFile('bash', [path.join(ROOT, 'deploy', 'local', 'stack.sh'), ...args], { env, timeout: 180_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`stack.sh ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** A Kafka broker of the bench's own (its state under .local/bench-failover-<pid>), and its stop. */
async function ownKafka() {
  const { freePort } = require('@bus/testing');
  const env = { ...process.env, BUS_LOCAL_DIR: path.join(ROOT, '.local', `bench-failover-${process.pid}`) };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS']) delete env[name];
  env.BUS_KAFKA_PORT = String(await freePort());
  env.BUS_KAFKA_CONTROLLER_PORT = String(await freePort());
  const printed = await stackScript(['up', 'kafka'], env);
  const brokers = /^KAFKA_BROKERS=(.+)$/m.exec(printed)?.[1] ?? `127.0.0.1:${env.BUS_KAFKA_PORT}`;
  const pid = Number(
    require('node:fs')
      .readFileSync(path.join(env.BUS_LOCAL_DIR, 'kafka', 'kafka.pid'), 'utf8')
      .trim(),
  );
  return {
    brokers,
    pid,
    stop: async () => {
      await stackScript(['down', 'kafka'], env);
      require('node:fs').rmSync(env.BUS_LOCAL_DIR, { recursive: true, force: true });
    },
  };
}

async function runSetting(setting, kafkaPid) {
  const { startNodeProcess, freePort, waitForHttp } = require('@bus/testing');
  const bench = await startBus('bench-failover', { layout: 'standalone', env: setting.env });
  const port = await freePort();
  // At info level, so its start-up line names the session it asked for.
  const second = startNodeProcess('services/delivery/dist/main.js', { ...bench.env, PORT: String(port), LOG_LEVEL: 'info' });
  try {
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, { process: second, timeoutMs: 60_000 });
    const session = /"session_timeout_ms":(\d+)/.exec(second.output())?.[1];
    const { workspace, producers, consumers } = await provisionWorkspace(bench, {
      systemId: som.examples['story.context'].system_id,
      messageTypes: Object.keys(som.examples),
      producers: 1,
      consumers: 1,
    });
    const api = busClient(bench.urls, workspace, producers, consumers[0]);
    const cpu = cpuMeter({
      gateway: bench.processes.gateway.child.pid,
      'delivery (survivor)': second.child.pid,
      'delivery (killed)': bench.processes.delivery.child.pid,
      'kafka (own)': kafkaPid,
    });

    const published = new Map();
    const statuses = {};
    const total = RATE * (BEFORE_KILL_SECONDS + AFTER_KILL_SECONDS);
    const killAt = RATE * BEFORE_KILL_SECONDS;
    const t0 = now();
    const inFlight = new Set();
    let killedAt;
    let cpuBefore;
    let steady;
    for (let i = 0; i < total; i++) {
      const delay = t0 + (i * 1000) / RATE - now();
      if (delay > 0) await sleep(delay);
      // The first second warms up; the steady CPU is measured from then until the kill.
      if (i === RATE) cpuBefore = cpu.sample();
      if (i === killAt) {
        steady = { cpu: cpu.perThousand(cpuBefore, cpu.sample(), killAt - RATE) };
        bench.processes.delivery.child.kill('SIGKILL');
        killedAt = Date.now();
      }
      while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      const publish = api.publish(0, `failover-${i % CORRELATION_IDS}`).then((p) => {
        inFlight.delete(publish);
        statuses[p.status] = (statuses[p.status] ?? 0) + 1;
        if (p.status === 202) published.set(p.messageId, p.acceptedWall);
      });
      inFlight.add(publish);
    }
    await Promise.all(inFlight);

    // Delivered: the consumer's queue row, stamped by Postgres (same machine, same clock), so the
    // figures are delivery's and not a consumer's pace through the backlog the stall left.
    const consumerId = consumers[0].clientId;
    const rows = async () => bench.db('deliveries').where({ consumer_id: consumerId }).select('message_id', 'enqueued_at');
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
    let delivered = await rows();
    while (delivered.length < published.size && Date.now() < drainDeadline) {
      await sleep(500);
      delivered = await rows();
    }
    const enqueuedAt = new Map(delivered.map((r) => [r.message_id, new Date(r.enqueued_at).getTime()]));

    let longestGap = 0;
    let resumedAfter = 0;
    let lost = 0;
    for (const [id, acceptedAt] of published) {
      const at = enqueuedAt.get(id);
      if (at === undefined) {
        lost += 1;
        continue;
      }
      longestGap = Math.max(longestGap, at - acceptedAt);
      // Held up by the stall: its delivery is when the dead process's partitions delivered again.
      if (acceptedAt >= killedAt && at - acceptedAt > STALLED_MS) resumedAfter = Math.max(resumedAfter, at - killedAt);
    }
    delete steady.cpu['delivery (killed)'];
    return {
      setting: setting.name,
      session,
      published: published.size,
      delivered: enqueuedAt.size,
      lost,
      statuses,
      longestGap,
      resumedAfter,
      cpu: steady.cpu,
    };
  } finally {
    await second.stop();
    await bench.stop();
  }
}

async function main() {
  loadStackEnv();
  const kafka = await ownKafka();
  process.env.KAFKA_BROKERS = kafka.brokers;
  const results = [];
  try {
    for (const setting of SETTINGS) results.push(await runSetting(setting, kafka.pid));
  } finally {
    await kafka.stop();
  }
  console.log(`\nDelivery failover after a SIGKILL — ${machine()}; ${RATE} msg/s, two delivery processes, 3 partitions, a broker of the bench's own`);
  console.log(
    '| setting | session | accepted | delivered | lost | longest 202 → delivered | kill → partitions deliver again | CPU ms / 1,000 msg before the kill |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.setting} | ${r.session ?? '?'} ms | ${r.published} | ${r.delivered} | ${r.lost} | ${(r.longestGap / 1000).toFixed(1)} s | ${(r.resumedAfter / 1000).toFixed(1)} s | ${cpuLine(r.cpu)} |`,
    );
  }
  for (const r of results) {
    const others = Object.entries(r.statuses).filter(([status]) => status !== '202');
    // Status 0: failed on the network.
    if (others.length > 0) console.log(`${r.setting}: publishes not accepted (left out), by status: ${others.map(([s, n]) => `${s} × ${n}`).join(', ')}`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
