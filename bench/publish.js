// Benchmark of publishing (`npm run bench:publish`; needs the local stack: deploy/local/stack.sh up).
// Not a test: the figures depend on the machine, so nothing here passes or fails.
//
// Starts the real all-in-one process on a database of its own, provisions one workspace with
// PRODUCERS producer connections on the custom ceiling (200/s each), and POSTs ~2 KB story.context
// messages at a fixed concurrency over HTTP: bearer auth, limits, parse, idempotency, validation,
// policy and the Postgres transaction holding the story lock across an acks=all Kafka send. The bus
// host's own limits (200/s for the whole API) are widened for the run, or they would be what is
// measured. Then, as the ceiling, a raw kafkajs acks=all send of the same bytes at the same concurrency.
'use strict';

const { randomBytes, randomUUID } = require('node:crypto');
const pino = require('pino');
const { som } = require('@bus/schemas');
const { createDatabase } = require('@bus/db');
const { createControlPublisher, IdentityAdmin } = require('@bus/identity');
const { createKafka, createProducer, ensureTopics, sendAcked } = require('@bus/kafka');
const { createTestDatabase, freePort, startNodeProcess, waitForHttp } = require('@bus/testing');
const { loadStackEnv, machine, measure } = require('./support');

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RUN_MS = Number(process.env.BENCH_SECONDS ?? 15) * 1000;
const WARM_UP_MS = 3_000;
const PRODUCERS = 8;

/** A story.context message of about 2 KB (the typical size the issue names), fresh ids per call. */
function messageOf(i) {
  const m = JSON.parse(JSON.stringify(som.examples['story.context']));
  m.message_id = randomUUID();
  m.correlation_id = `bench-${i % 256}`;
  m.occurred_at = new Date().toISOString();
  return Buffer.from(JSON.stringify(m), 'utf8');
}

async function run(proc, label, fn) {
  try {
    return await fn();
  } catch (err) {
    process.stderr.write(`${label} failed: ${err.message}\n${proc ? proc.output() : ''}\n`);
    throw err;
  }
}

async function main() {
  loadStackEnv();
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
    OPERATOR_CLIENT_ID: 'operator',
    OPERATOR_CLIENT_SECRET: randomBytes(24).toString('hex'),
    BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000',
    BUS_LIMIT_API_PER_SECOND: '100000',
    BUS_LIMIT_API_BURST: '200000',
    LOG_LEVEL: 'warn',
  };
  const setup = startNodeProcess('services/all-in-one/dist/setup.js', env);
  if ((await setup.exited) !== 0) throw new Error(`setup failed:\n${setup.output()}`);
  const bus = startNodeProcess('services/all-in-one/dist/main.js', env);
  const db = createDatabase({ url: database.url, poolMax: 2, applicationName: 'bench-publish' });
  const kafka = createKafka({ brokers: process.env.KAFKA_BROKERS.split(','), clientId: 'bench-publish', logger });
  const producer = createProducer(kafka);
  try {
    await run(bus, 'start', () => waitForHttp(`${busUrl}/readyz`, { process: bus, timeoutMs: 60_000 }));
    await producer.connect();
    const admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
    const org = await admin.createOrganisation({ name: 'Bench house', kind: 'house' });
    const workspace = await admin.createWorkspace({ organisationId: org, name: 'Bench' });
    await db('workspaces').where({ id: workspace }).update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
    const app = await admin.createApp({ workspaceId: workspace, organisationId: org, name: 'Bench app' });
    await admin.setPermissions(app, { systemIds: [som.examples['story.context'].system_id], messageTypes: Object.keys(som.examples) });
    const tokens = [];
    for (let i = 0; i < PRODUCERS; i++) {
      const c = await admin.createConnection({ appId: app, kind: 'producer' });
      const res = await fetch(`${busUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { Authorization: `Basic ${Buffer.from(`${c.clientId}:${c.clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
      tokens.push((await res.json()).access_token);
    }
    const sample = messageOf(0);

    const publish = await measure({
      concurrency: CONCURRENCY,
      warmUpMs: WARM_UP_MS,
      runMs: RUN_MS,
      operation: async (i) => {
        const res = await fetch(`${busUrl}/v1/tenants/${workspace}/messages`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tokens[i % PRODUCERS]}`, 'Content-Type': 'application/json' },
          body: messageOf(i),
        });
        await res.arrayBuffer();
        return res.status === 202;
      },
    });

    const topic = `bench.raw.${randomBytes(4).toString('hex')}`;
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.connect();
    await ensureTopics(kafkaAdmin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
    const raw = await measure({
      concurrency: CONCURRENCY,
      warmUpMs: WARM_UP_MS,
      runMs: RUN_MS,
      operation: async (i) => {
        await sendAcked(producer, { topic, key: `${workspace}/bench-${i % 256}`, value: messageOf(i), headers: {} });
        return true;
      },
    });
    await kafkaAdmin.deleteTopics({ topics: [topic] });
    await kafkaAdmin.disconnect();

    const row = (name, r) => `| ${name} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.failures} |`;
    console.log(`\nPublish benchmark — ${machine()}; ${CONCURRENCY} concurrent, ${RUN_MS / 1000} s measured, message ${sample.length} bytes\n`);
    console.log('| path | per second | p50 ms | p99 ms | not 202 / failed |');
    console.log('|---|---|---|---|---|');
    console.log(row('POST /v1/tenants/{t}/messages (all-in-one)', publish));
    console.log(row('raw kafkajs send, acks=all (ceiling)', raw));
  } finally {
    await producer.disconnect().catch(() => undefined);
    await bus.stop();
    await db.destroy();
    await database.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
