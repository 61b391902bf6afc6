// Shared by the benchmarks: the local stack's addresses, a fixed-concurrency driver, and the running
// all-in-one bus with a provisioned workspace.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { httpClient } = require('./http-client');

/** The local stack's directory: BUS_LOCAL_DIR when set, as deploy/local/stack.sh reads it, else .local. */
function localStackDir() {
  return process.env.BUS_LOCAL_DIR ?? path.join(__dirname, '..', '.local');
}

/** Reads the local stack's stack.env (written by deploy/local/stack.sh up) into process.env, unless already set. */
function loadStackEnv() {
  const file = path.join(localStackDir(), 'stack.env');
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (m && process.env[m[1]] === undefined) process.env[m[1]] = m[2];
    }
  }
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS']) {
    if (!process.env[name]) throw new Error(`${name} is not set: start the local stack (bash deploy/local/stack.sh up)`);
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Runs `operation(i)` from `concurrency` workers, each starting the next as soon as one finishes:
 * a warm-up whose results are dropped, then `runMs` measured. `operation` resolves true on success.
 * Returns successes per second and latency percentiles (ms) of the successes, and with a `cpu`
 * (cpuMeter) the CPU milliseconds per 1,000 successes of each process over the measured part; with a
 * `recorder` ({ start, stop }: perfRecorder, allocRecorder, or both through recorders()) what it records
 * over that part.
 */
async function measure({ concurrency, warmUpMs, runMs, operation, cpu, recorder, pauseMs = 0 }) {
  const latencies = [];
  let failures = 0;
  let recording = false;
  let stopAt = Date.now() + warmUpMs;
  let next = 0;
  const worker = async () => {
    while (Date.now() < stopAt) {
      const started = process.hrtime.bigint();
      const ok = await operation(next++);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      if (!recording) continue;
      if (ok) latencies.push(ms);
      else failures += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  recording = true;
  await recorder?.start();
  const began = Date.now();
  const cpuBefore = cpu?.sample();
  stopAt = began + runMs;
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (Date.now() - began) / 1000;
  const cpuPerThousand = cpu ? cpu.perThousand(cpuBefore, cpu.sample(), latencies.length) : undefined;
  await recorder?.stop();
  latencies.sort((a, b) => a - b);
  return {
    cpuPerThousand,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    count: latencies.length,
    failures,
  };
}

/**
 * The real all-in-one process on a database of its own, after setup.js, as `npm run up` runs it, with
 * the bus host's own limits widened (BUS_LIMIT_*): the whole API's 200/s would otherwise be what is
 * measured. With `layout: 'standalone'`, the auth, gateway, delivery and pull-api processes instead
 * (services/<name>/dist/main.js, as in Kubernetes), `busUrl` then being auth's (the token issuer).
 * `env` adds or overrides variables of the run. Returns the bus address, `urls` of the token, publish
 * and consumer routes, the processes by name, their environment (`env`), a
 * Postgres client and `databaseUrl` of the run database, a Kafka producer of the bench's own, an
 * IdentityAdmin to provision with, the run database's statementMeter (`statements`), and stop().
 */
/**
 * BENCH_CONNECTION_FACTOR (10): the bus's BUS_LIMIT_CONNECTION_FACTOR for the run. docs/api.md#limits caps one
 * connection at 200 calls a second, so receive + ack for one consumer (a receive and an ack per 10
 * messages) could never show more than ~1,000 messages a second, nor a publish run more than 200 per
 * producer: the quotas stay on, scaled, so what is measured is the bus, not the tier.
 */
const CONNECTION_FACTOR = Number(process.env.BENCH_CONNECTION_FACTOR ?? 10);

async function startBus(name, { layout = 'all-in-one', env: extraEnv = {} } = {}) {
  loadStackEnv();
  const pino = require('pino');
  const { createDatabase } = require('@bus/db');
  const { createControlPublisher, IdentityAdmin } = require('@bus/identity');
  const { createKafka, createProducer } = require('@bus/kafka');
  const { createTestDatabase, freePort, startNodeProcess, waitForHttp } = require('@bus/testing');
  const { randomBytes } = require('node:crypto');

  const logger = pino({ level: 'warn' });
  const database = await createTestDatabase('bus_bench');
  const busPort = await freePort();
  const busUrl = `http://127.0.0.1:${busPort}`;
  const env = {
    HOST: '127.0.0.1',
    BUS_PORT: String(busPort),
    PORTAL_PORT: String(await freePort()),
    DATABASE_URL: database.url,
    DATABASE_POOL_MAX: '20',
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: database.name,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    KAFKA_REPLICATION_FACTOR: '1',
    KAFKA_MESSAGES_PARTITIONS: '3',
    BUS_BASE_URL: busUrl,
    SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    RECEIPT_HANDLE_KEY: randomBytes(32).toString('base64'),
    // The portal's admin API (in the same process) needs operator credentials; the bench never calls it.
    OPERATOR_CLIENT_ID: 'operator',
    OPERATOR_CLIENT_SECRET: randomBytes(24).toString('hex'),
    BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000',
    BUS_LIMIT_API_PER_SECOND: '100000',
    BUS_LIMIT_API_BURST: '200000',
    BUS_LIMIT_CONNECTION_FACTOR: String(CONNECTION_FACTOR),
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const setup = startNodeProcess('services/all-in-one/dist/setup.js', env);
  if ((await setup.exited) !== 0) throw new Error(`setup failed:\n${setup.output()}`);
  // BENCH_CPU_PROF=<dir>: the bus writes a V8 CPU profile there when it stops (open it in Chrome's
  // DevTools or summarise it with bench/profile-summary.js). BENCH_PERF=<dir>: its JIT'd functions are
  // named for perf (perfRecorder). BENCH_NODE_FLAGS: more node or V8 flags, space-separated (say
  // `--log-code --no-logfile-per-isolate --logfile=/tmp/v8-%p.log`: when the JIT compiles what, at
  // which tier).
  if (process.env.BENCH_PERF) fs.mkdirSync(path.resolve(process.env.BENCH_PERF), { recursive: true });
  // BENCH_ALLOC=<dir>: each process samples its allocations while allocRecorder asks it to.
  if (process.env.BENCH_ALLOC) {
    fs.mkdirSync(path.resolve(process.env.BENCH_ALLOC), { recursive: true });
    env.BENCH_ALLOC_DIR = path.resolve(process.env.BENCH_ALLOC);
  }
  const profileArgs = [
    ...(process.env.BENCH_ALLOC ? ['--require', path.join(__dirname, 'alloc-sampler.js')] : []),
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []),
    // --perf-basic-prof turns V8's log on too: kept beside the recording, not in the working directory.
    ...(process.env.BENCH_PERF ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${path.resolve(process.env.BENCH_PERF, 'v8-%p.log')}`] : []),
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
  ];
  const processes = {};
  const urls = { auth: busUrl, gateway: busUrl, pullApi: busUrl };
  // Each process's own address, for its /readyz (delivery serves only the operational routes).
  const own = {};
  if (layout === 'standalone') {
    for (const [service, key] of [
      ['auth', 'auth'],
      ['gateway', 'gateway'],
      ['delivery', null],
      ['pull-api', 'pullApi'],
    ]) {
      const port = service === 'auth' ? busPort : await freePort();
      own[service] = `http://127.0.0.1:${port}`;
      if (key !== null) urls[key] = own[service];
      processes[service] = startNodeProcess(`services/${service}/dist/main.js`, { ...env, PORT: String(port) }, profileArgs);
    }
  } else {
    own['all-in-one'] = busUrl;
    processes['all-in-one'] = startNodeProcess('services/all-in-one/dist/main.js', env, profileArgs);
  }
  const bus = processes.auth ?? processes['all-in-one'];
  const db = createDatabase({ url: database.url, poolMax: 2, applicationName: name });
  const stackDb = createDatabase({ url: process.env.DATABASE_URL, poolMax: 1, applicationName: `${name}-statements` });
  const statements = statementMeter(stackDb, database.name);
  const kafka = createKafka({ brokers: process.env.KAFKA_BROKERS.split(','), clientId: name, logger });
  const producer = createProducer(kafka);
  const stop = async () => {
    await producer.disconnect().catch(() => undefined);
    await Promise.all(Object.values(processes).map((p) => p.stop()));
    // The processes deleted their control-topic groups as they stopped; the run's delivery group
    // (named after its database, dropped below) would stay on the shared brokers with its offsets.
    const admin = kafka.admin();
    await admin
      .connect()
      .then(() => admin.deleteGroups([require('@bus/delivery').defaultDeliveryGroupId(database.url)]))
      .catch((err) => process.stderr.write(`delivery group not deleted: ${err.message}\n`))
      .finally(() => admin.disconnect().catch(() => undefined));
    await db.destroy();
    await stackDb.destroy();
    await database.drop();
  };
  try {
    for (const [service, p] of Object.entries(processes)) await waitForHttp(`${own[service]}/readyz`, { process: p, timeoutMs: 60_000 });
    await producer.connect();
    // A new bus's delivery group first reads the shared topic's history (other runs' records): the
    // figures start once it has caught up, so they do not measure that history's length.
    const { defaultDeliveryGroupId } = require('@bus/delivery');
    const { MESSAGES_TOPIC } = require('@bus/kafka');
    const { waitForGroupCaughtUp } = require('@bus/testing');
    const catchUpStarted = Date.now();
    await waitForGroupCaughtUp(kafka.admin(), defaultDeliveryGroupId(database.url), MESSAGES_TOPIC, 900_000);
    process.stderr.write(`delivery caught up with the shared topic's history in ${((Date.now() - catchUpStarted) / 1000).toFixed(1)} s\n`);
  } catch (err) {
    process.stderr.write(
      `start failed: ${err.message}\n${Object.values(processes)
        .map((p) => p.output())
        .join('\n')}\n`,
    );
    await stop();
    throw err;
  }
  const admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
  return { busUrl, urls, own, bus, processes, env, db, databaseUrl: database.url, databaseName: database.name, kafka, producer, admin, statements, stop };
}

/**
 * One house workspace on the custom quota ceiling (200/s, bursts of 400, 10,000,000 a day: docs/api.md#limits
 * highest allowance per connection), one app allowed every message type of `systemId`, and a bearer
 * token for each of `producers` producer and `consumers` consumer connections.
 */
async function provisionWorkspace({ busUrl, db, admin }, { systemId, messageTypes, producers, consumers = 0 }) {
  const org = await admin.createOrganisation({ name: 'Bench house', kind: 'house' });
  const workspace = await admin.createWorkspace({ organisationId: org, name: 'Bench' });
  await db('workspaces').where({ id: workspace }).update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
  const app = await admin.createApp({ workspaceId: workspace, organisationId: org, name: 'Bench app' });
  await admin.setPermissions(app, { systemIds: [systemId], messageTypes });
  const connect = async (kind) => {
    const c = await admin.createConnection({ appId: app, kind });
    // The token route's limit for all callers (20 a second) paces a workspace of many connections.
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${busUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      if (res.status === 429 && attempt < 10) {
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
      return { clientId: c.clientId, clientSecret: c.clientSecret, token: (await res.json()).access_token };
    }
  };
  const producerConnections = [];
  for (let i = 0; i < producers; i++) producerConnections.push(await connect('producer'));
  const consumerConnections = [];
  for (let i = 0; i < consumers; i++) consumerConnections.push(await connect('consumer'));
  return { workspace, producers: producerConnections, consumers: consumerConnections };
}

/**
 * A story.context message of about 2 KB (a typical story context) with a fresh message_id, as the
 * bytes to POST. Built by filling the example's text around its three changing members: 3.7 µs a
 * message, where a deep copy and two JSON passes cost the bench process 18–21 µs of the CPU it shares
 * with the bus, which held the raw ceiling down by 15–20 % (docs/benchmarks.md, "Publish history").
 */
function storyMessage(correlationId) {
  const messageId = randomUUID();
  const values = { message_id: messageId, correlation_id: correlationId, occurred_at: new Date().toISOString() };
  const parts = storyTemplate();
  let text = parts[0];
  for (let i = 1; i < parts.length; i += 2) text += JSON.stringify(values[parts[i]]) + parts[i + 1];
  return { messageId, body: Buffer.from(text, 'utf8') };
}

let storyParts;

/** The example's JSON text split around its changing members: literal, member name, literal, ... */
function storyTemplate() {
  if (!storyParts) {
    const { som } = require('@bus/schemas');
    const m = { ...som.examples['story.context'], message_id: '\0message_id', correlation_id: '\0correlation_id', occurred_at: '\0occurred_at' };
    storyParts = JSON.stringify(m).split(/"\\u0000(message_id|correlation_id|occurred_at)"/);
    if (storyParts.length !== 7) throw new Error('story.context example: expected message_id, correlation_id and occurred_at members');
  }
  return storyParts;
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times (Linux's USER_HZ, 100 on every usual kernel). */
const TICKS_PER_SECOND = 100;

/** utime + stime of a live process in ticks (0 when it is gone), and of its reaped children if asked. */
function processTicks(pid, withChildren = false) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
    return utime + stime + (withChildren ? cutime + cstime : 0);
  } catch {
    return 0;
  }
}

function pidFromFile(file) {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').split('\n')[0].trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The live children of `parent`, as pids. */
function childrenOf(parent) {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

/**
 * CPU used by each process of a run, read from /proc: `busPids` (name → pid of a bus process), the
 * local stack's Postgres (its postmaster with reaped children, plus every live backend and auxiliary
 * process), Kafka and Redis. Postgres, Kafka and Redis are shared by whatever else runs on the machine:
 * run benches on a quiet machine. `sample()` returns a snapshot; `perThousand(a, b, messages)` the CPU
 * milliseconds per 1,000 messages for each process between two snapshots.
 */
function cpuMeter(busPids) {
  const local = localStackDir();
  const postmaster = pidFromFile(path.join(local, 'postgres', 'data', 'postmaster.pid'));
  const kafka = pidFromFile(path.join(local, 'kafka', 'kafka.pid'));
  const redis = pidFromFile(path.join(local, 'redis', 'redis.pid'));
  const sample = () => {
    const ticks = {};
    for (const [name, pid] of Object.entries(busPids)) ticks[name] = processTicks(pid);
    if (postmaster) {
      ticks.postgres = processTicks(postmaster, true) + childrenOf(postmaster).reduce((sum, pid) => sum + processTicks(pid), 0);
    }
    if (kafka) ticks.kafka = processTicks(kafka);
    if (redis) ticks.redis = processTicks(redis);
    return ticks;
  };
  const perThousand = (before, after, messages) =>
    Object.fromEntries(Object.keys(after).map((name) => [name, (((after[name] - (before[name] ?? 0)) * 1000) / TICKS_PER_SECOND / messages) * 1000]));
  /** Cores each process kept busy between two samples `seconds` apart. */
  const coresBusy = (before, after, seconds) =>
    Object.fromEntries(Object.keys(after).map((name) => [name, (after[name] - (before[name] ?? 0)) / TICKS_PER_SECOND / seconds]));
  /** The processes it measures, by name, as pids (Postgres: the postmaster and its children now). */
  const pids = () => ({
    ...Object.fromEntries(Object.entries(busPids).map(([name, pid]) => [name, [pid]])),
    ...(postmaster ? { postgres: [postmaster, ...childrenOf(postmaster)] } : {}),
    ...(kafka ? { kafka: [kafka] } : {}),
    ...(redis ? { redis: [redis] } : {}),
  });
  return { sample, perThousand, coresBusy, pids };
}

/**
 * BENCH_PERF=<dir>: `perf record` of the whole machine over the measured part of `phase`
 * (<dir>/<phase>.perf.data, with <phase>.roles.json naming the processes of `cpu`, a cpuMeter);
 * bench/perf-summary.js reads them. Without BENCH_PERF, undefined (measure records nothing). perf
 * samples the CPU, where V8's profile samples the wall clock (bench/perf-summary.js says why both).
 */
function perfRecorder(phase, cpu) {
  const dir = process.env.BENCH_PERF;
  if (!dir) return undefined;
  const { spawn } = require('node:child_process');
  const file = path.resolve(dir, `${phase}.perf.data`);
  let recording;
  let exited;
  return {
    start: async () => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.rmSync(file, { force: true });
      fs.writeFileSync(file.replace(/\.perf\.data$/, '.roles.json'), JSON.stringify(cpu.pids()));
      recording = spawn('perf', ['record', '-a', '-F', '999', '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let failed;
      recording.stderr.on('data', (d) => (stderr += d));
      exited = new Promise((resolve, reject) => {
        recording.once('error', (err) => reject(new Error(`BENCH_PERF: could not run perf (${err.message}); install linux-perf or leave BENCH_PERF unset`)));
        recording.once('exit', (code, signal) =>
          code === 0 || signal === 'SIGINT' ? resolve() : reject(new Error(`BENCH_PERF: perf record failed (${code ?? signal}): ${stderr.trim()}`)),
        );
      });
      exited.catch((err) => (failed = err));
      // perf has started sampling once it has opened its output; one that could not start says why.
      const started = Date.now();
      while (!failed && !fs.existsSync(file) && Date.now() - started < 5_000) await new Promise((resolve) => setTimeout(resolve, 20));
      if (failed) throw failed;
    },
    stop: async () => {
      recording.kill('SIGINT');
      await exited;
      process.stderr.write(`perf record of ${phase}: ${file} (node bench/perf-summary.js ${file})\n`);
    },
  };
}

/**
 * BENCH_ALLOC=<dir>: the bus processes' allocations sampled over the measured part of `phase`
 * (bench/alloc-sampler.js, which startBus preloads), written to <dir>/<phase>.<process>.heapprofile for
 * bench/alloc-summary.js. `processes`: startBus's, by name. Without BENCH_ALLOC, undefined.
 */
function allocRecorder(phase, processes) {
  const dir = process.env.BENCH_ALLOC;
  if (!dir) return undefined;
  const signal = () => Object.values(processes).forEach((p) => p.child.kill('SIGUSR2'));
  return {
    start: async () => signal(),
    stop: async () => {
      signal();
      for (const [name, p] of Object.entries(processes)) {
        const written = path.resolve(dir, `alloc-${p.child.pid}.heapprofile`);
        const started = Date.now();
        while (!fs.existsSync(written)) {
          if (Date.now() - started > 30_000) throw new Error(`BENCH_ALLOC: ${name} wrote no allocation profile in 30 s (${p.output().slice(-500)})`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const file = path.resolve(dir, `${phase}.${name}.heapprofile`);
        fs.renameSync(written, file);
        process.stderr.write(`allocations of ${name} in ${phase}: ${file} (node bench/alloc-summary.js ${file})\n`);
      }
    },
  };
}

/** The recorders given (perfRecorder, allocRecorder; undefined ones left out) as one for measure(), or undefined. */
function recorders(...all) {
  const present = all.filter(Boolean);
  if (present.length === 0) return undefined;
  return {
    start: async () => {
      for (const r of present) await r.start();
    },
    stop: async () => {
      for (const r of present) await r.stop();
    },
  };
}

/**
 * Postgres' own figures per statement of one database (pg_stat_statements, which the local stack
 * loads; read through the stack's `bus` database): `sample()` a snapshot, `costs(before, after)` the
 * statements that took most time between two — calls, mean ms, and shared buffers and WAL bytes per
 * call. Buffers and WAL count work, not time, so runs on a busy machine compare by them where their
 * milliseconds do not. Snapshots are null without the extension's view (a Postgres started before the
 * stack script loaded it: `stack.sh down postgres`, then `up`); any other failure is thrown.
 */
function statementMeter(stackDb, databaseName) {
  const sample = () =>
    stackDb
      .raw(
        `SELECT queryid::text AS id, query, calls, total_exec_time AS ms, shared_blks_hit + shared_blks_read AS buffers, wal_bytes::float8 AS wal
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ?)`,
        [databaseName],
      )
      .then(({ rows }) => new Map(rows.map((r) => [r.id, r])))
      // Only a missing view means "not loaded" (undefined_table); any other failure is the bench's to show.
      .catch((err) => {
        if (err.code === '42P01') return null;
        throw err;
      });
  const costs = (before, after, top = 5) => {
    if (!before || !after) return null;
    const zero = { calls: 0, ms: 0, buffers: 0, wal: 0 };
    return [...after.values()]
      .map((r) => {
        const b = before.get(r.id) ?? zero;
        const calls = Number(r.calls) - Number(b.calls);
        return { query: r.query, calls, ms: r.ms - b.ms, buffers: Number(r.buffers) - Number(b.buffers), wal: r.wal - b.wal };
      })
      .filter((c) => c.calls > 0)
      .sort((x, y) => y.ms - x.ms)
      .slice(0, top);
  };
  return { sample, costs };
}

/** statementMeter's costs as a markdown table, each statement named by the start of its text. */
function statementTable(costs) {
  if (!costs)
    return "Postgres per statement: no pg_stat_statements view in this Postgres (the local stack's has it once its Postgres was restarted: stack.sh down postgres; stack.sh up).";
  const name = (query) => query.replace(/\s+/g, ' ').replace(/\|/g, '/').trim().slice(0, 72);
  return [
    '| statement (pg_stat_statements, most time first) | calls | ms per call | buffers per call | WAL bytes per call |',
    '|---|---|---|---|---|',
    ...costs.map(
      (c) => `| \`${name(c.query)}\` | ${c.calls} | ${(c.ms / c.calls).toFixed(3)} | ${(c.buffers / c.calls).toFixed(1)} | ${(c.wal / c.calls).toFixed(0)} |`,
    ),
  ].join('\n');
}

/** One line: CPU milliseconds per 1,000 messages for each process, from cpuMeter's perThousand. */
function cpuLine(perThousand) {
  return Object.entries(perThousand)
    .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
    .join(', ');
}

/**
 * The bus calls the bench makes, each stamped with the monotonic time its answer arrived. A call that
 * fails on the network answers status 0 and is counted in `networkErrors`, so one reset connection
 * neither stops the run nor goes unreported.
 */
function busClient(urls, workspace, producers, consumer) {
  const consumerBase = `${urls.pullApi}/v1/tenants/${workspace}/consumers/${consumer.clientId}`;
  const json = (token) => ({ Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' });
  const client = { networkErrors: 0 };
  const now = () => performance.now();
  const request = httpClient();
  const call = async (url, init) => {
    try {
      const res = await request(url, init);
      const text = res.body.toString('utf8');
      const body = res.headers['content-type']?.includes('json') ? JSON.parse(text) : text;
      return { status: res.status, body, retryAfter: Number(res.headers['retry-after'] ?? 1) };
    } catch {
      client.networkErrors += 1;
      return { status: 0, body: undefined, retryAfter: 1 };
    }
  };
  client.publish = async (i, correlationId) => {
    const { messageId, body } = storyMessage(correlationId);
    const startedAt = now();
    const res = await call(`${urls.gateway}/v1/tenants/${workspace}/messages`, { method: 'POST', headers: json(producers[i % producers.length].token), body });
    // Wall-clock too, to compare with the enqueued_at that Postgres stamps (same machine, same clock).
    return { messageId, status: res.status, retryAfter: res.retryAfter, startedAt, acceptedAt: now(), acceptedWall: Date.now() };
  };
  client.receive = async (waitSeconds) => {
    const res = await call(`${consumerBase}/messages?max_messages=10&wait_seconds=${waitSeconds}`, { headers: json(consumer.token) });
    return { ...res, at: now(), messages: res.status === 200 ? res.body.messages : [] };
  };
  client.ack = async (handles) => {
    const res = await call(`${consumerBase}/ack`, { method: 'POST', headers: json(consumer.token), body: JSON.stringify({ receipt_handles: handles }) });
    return { ...res, done: res.status === 200 ? res.body.results.filter((r) => r.status === 'done').length : 0 };
  };
  client.nack = async (handles) => {
    const res = await call(`${consumerBase}/nack`, { method: 'POST', headers: json(consumer.token), body: JSON.stringify({ receipt_handles: handles }) });
    return { ...res, done: res.status === 200 ? res.body.results.filter((r) => r.status === 'done').length : 0 };
  };
  /** Any other call of the bus (a refused publish, a token), with the same accounting. */
  client.call = call;
  return client;
}

/**
 * Publishes `total` messages through `api` (busClient) at `rate` a second on an open loop: each starts
 * on its schedule, at most `maxInFlight` open (past it the schedule slips instead of piling up
 * requests on a machine that cannot keep up; the achieved rate says so). The i-th message's correlation
 * id is `correlationId(i)`; `beforePublish(i)`, when given, runs before the i-th is scheduled (a meter's
 * sample where the measured part begins). Resolves with the accepted publishes by message id (each
 * with its `index` and `second`, its start in seconds after the loop's), the count of other answers
 * and the achieved rate. `published`, when given, is the map filled (a receive loop may watch it grow).
 */
async function publishAtRate(api, { rate, total, correlationId, maxInFlight = 64, beforePublish, published = new Map() }) {
  let refused = 0;
  const inFlight = new Set();
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    if (beforePublish) await beforePublish(i);
    const delay = t0 + (i * 1000) / rate - performance.now();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const publish = api.publish(i, correlationId(i)).then((p) => {
      inFlight.delete(publish);
      if (p.status === 202) published.set(p.messageId, { ...p, index: i, second: (p.startedAt - t0) / 1000 });
      else refused += 1;
    });
    inFlight.add(publish);
  }
  await Promise.all(inFlight);
  return { published, refused, achievedRate: total / ((performance.now() - t0) / 1000) };
}

/**
 * Queues messages straight through the delivery store (the enqueue the delivery service runs), without
 * Kafka: `enqueue(workspaceId, correlationIds)` stores one ~250-byte message per correlation id given,
 * in that order, `batch` a statement. Offsets continue from call to call, from `firstOffset`.
 */
function directEnqueuer(db, { firstOffset = 0, batch = 1_000 } = {}) {
  const { KnexDeliveryStore } = require('@bus/queue');
  const { randomUUID } = require('node:crypto');
  const store = KnexDeliveryStore.create(db);
  let offset = firstOffset;
  return async (workspaceId, correlationIds) => {
    for (let at = 0; at < correlationIds.length; at += batch) {
      const enqueue = correlationIds.slice(at, at + batch).map((correlationId) => ({
        workspaceId,
        messageId: randomUUID(),
        body: Buffer.from(JSON.stringify({ correlation_id: correlationId, padding: 'x'.repeat(200) })),
        messageType: 'story.context',
        correlationId,
        publishedAt: new Date(),
        kafkaPartition: 0,
        kafkaOffset: String(offset++),
        traceparent: null,
      }));
      await store.write({ enqueue, quarantine: [] });
    }
  };
}

/** The machine line every benchmark prints with its figures. */
function machine() {
  const os = require('node:os');
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

module.exports = {
  directEnqueuer,
  publishAtRate,
  busClient,
  CONNECTION_FACTOR,
  cpuLine,
  cpuMeter,
  httpClient,
  perfRecorder,
  allocRecorder,
  recorders,
  loadStackEnv,
  measure,
  machine,
  percentile,
  startBus,
  provisionWorkspace,
  statementMeter,
  statementTable,
  storyMessage,
};
