// Benchmark of token issuance (`npm run bench:token`, after `tsc -b`; needs the local stack: Postgres,
// Redis, Kafka from deploy/local/stack.sh). Not a test: the figures depend on the machine.
//
// The token URL's own limits (docs/api.md#limits: all callers 20/s with bursts of 40, 30 per client and 100 per
// address in 5 minutes) would turn a benchmark of the running bus into a benchmark of its 429s, so
// this runs the same token service (createAuthService, as the all-in-one mounts it) in a child
// process on its own port and database, with only the limits widened, and drives it over HTTP from
// this process at a fixed concurrency: every request a real client-credentials grant with HTTP Basic,
// a Postgres read of the connection and its credentials, the SHA-256 check, ES256 signing.
'use strict';

const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { cpuLine, cpuMeter, httpClient, loadStackEnv, machine, measure } = require('./support');

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WARM_UP_MS = 2_000;
const RUN_MS = Number(process.env.BENCH_SECONDS ?? 10) * 1000;
const CLIENTS = 20;

/** The child: a fresh database with a tenant of CLIENTS producers, the token service on a free port. */
async function server() {
  const pino = require('pino');
  const { createDatabase, migrateLatest } = require('@bus/db');
  const { createHttpApp, createRequestMetrics, serve, violationBody } = require('@bus/http');
  const { createControlPublisher, IdentityAdmin } = require('@bus/identity');
  const { createKafka, createProducer } = require('@bus/kafka');
  const { createRedis } = require('@bus/limits');
  const { createMetricsRegistry } = require('@bus/observability');
  const { createTestDatabase } = require('@bus/testing');
  const { createAuthService } = require('@bus/auth');

  const logger = pino({ level: 'warn' });
  const database = await createTestDatabase('bus_bench');
  const db = createDatabase({ url: database.url, poolMax: 10, applicationName: 'bench-token' });
  await migrateLatest(db);
  const kafka = createKafka({ brokers: process.env.KAFKA_BROKERS.split(','), clientId: 'bench-token', logger });
  const producer = createProducer(kafka);
  await producer.connect();
  const admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
  const org = await admin.createOrganisation({ name: 'Bench house', kind: 'house' });
  const workspace = await admin.createWorkspace({ organisationId: org, name: 'Bench' });
  const app = await admin.createApp({ workspaceId: workspace, organisationId: org, name: 'Bench app' });
  const clients = [];
  for (let i = 0; i < CLIENTS; i++) clients.push(await admin.createConnection({ appId: app, kind: 'producer' }));
  await producer.disconnect();

  const redis = createRedis(process.env.REDIS_URL, logger);
  const open = { rate: { points: 1_000_000, durationSeconds: 1 } };
  const auth = createAuthService({
    db,
    redis,
    logger,
    baseUrl: 'http://127.0.0.1',
    signingKeyEncryptionKey: randomBytes(32),
    rotationIntervalMs: 30 * 86_400_000,
    readiness: [],
    limitPrefix: `bench-${randomBytes(4).toString('hex')}`,
    limits: { perBasicClient: open, perAddress: open, allCallers: open },
  });
  await auth.start();
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const httpApp = createHttpApp({
    name: 'bus',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    routers: auth.routers,
  });
  const running = await serve(httpApp, { host: '127.0.0.1', port: 0, logger });
  process.send({ url: running.url, clients });
  process.on('message', async () => {
    await running.close(1000);
    await auth.stop();
    redis.disconnect();
    await db.destroy();
    await database.drop();
    process.exit(0);
  });
}

async function driver() {
  loadStackEnv();
  // BENCH_CPU_PROF=<dir>: the token service writes a V8 CPU profile there (bench/profile-summary.js reads it).
  const execArgv = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const child = fork(path.join(__dirname, 'token.js'), ['server'], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url, clients } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the token service exited with ${code}`)));
  });
  const headers = clients.map((c) => ({
    Authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`,
    'Content-Type': 'application/x-www-form-urlencoded',
  }));

  const request = httpClient();
  const result = await measure({
    concurrency: CONCURRENCY,
    warmUpMs: WARM_UP_MS,
    runMs: RUN_MS,
    cpu: cpuMeter({ 'token service': child.pid, bench: process.pid }),
    operation: async (i) => {
      const res = await request(`${url}/v1/oauth/token`, { method: 'POST', headers: headers[i % CLIENTS], body: 'grant_type=client_credentials' });
      return res.status === 200;
    },
  });
  child.send('stop');
  await new Promise((resolve) => child.once('exit', resolve));

  const verifications = await verificationsPerSecond();
  console.log(
    `Token benchmark — ${machine()}; concurrency ${CONCURRENCY}, ${RUN_MS / 1000} s after ${WARM_UP_MS / 1000} s warm-up, ${CLIENTS} clients, HTTP Basic\n`,
  );
  console.log('| Concurrency | Tokens/s | p50 ms | p99 ms | Requests | Failures |');
  console.log('|---|---|---|---|---|---|');
  console.log(
    `| ${CONCURRENCY} | ${Math.round(result.perSecond)} | ${result.p50.toFixed(1)} | ${result.p99.toFixed(1)} | ${result.count} | ${result.failures} |`,
  );
  console.log(`\nCPU ms per 1,000 tokens: ${cpuLine(result.cpuPerThousand)}`);
  console.log(`\nverifyAccessToken (ES256 signature and claims, what every bearer route runs, one core): ${Math.round(verifications)} /s`);
}

/** Verifications per second of one token, in this process, for 3 s after 1 s of warm-up. */
async function verificationsPerSecond() {
  const { audienceFor, buildClaims, generateSigningKey, importPublicJwk, signAccessToken, verifyAccessToken } = require('@bus/tokens');
  const audience = audienceFor('http://127.0.0.1');
  const key = generateSigningKey();
  const keys = new Map([[key.kid, importPublicJwk(key.publicJwk)]]);
  const now = new Date();
  const token = await signAccessToken(
    buildClaims({
      audience,
      clientId: 'cabcdefghijk2',
      workspaceId: 'wabcdefghijk2',
      organisationId: 'oabcdefghijk2',
      appId: 'aabcdefghijk2',
      credentialVersion: 1,
      now,
    }),
    key,
  );
  const runFor = async (ms) => {
    const until = Date.now() + ms;
    let n = 0;
    while (Date.now() < until) {
      await verifyAccessToken(token, { keys, audience, now });
      n += 1;
    }
    return n / (ms / 1000);
  };
  await runFor(1000);
  return runFor(3000);
}

if (process.argv[2] === 'server') {
  loadStackEnv();
  server().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  driver().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
