// The round trips of one publish made with raw clients, one after another and nothing else (no
// express, no checks, no group commit): the floor of a lone publish's latency on this machine, measured
// by bench:publish in the same run as the bus (BENCH_CONCURRENCY=1). In the order the gateway makes
// them: the host's limits and the connection's quota (two Redis calls), BEGIN with an advisory lock and
// two reads (one Postgres round trip), the acks=all Kafka send of the same bytes, the inserts with
// COMMIT (one round trip), and the HTTP request and its answer (to a bare node:http server in a child
// process, which reads the body and answers 202). A validate's (`route: 'validate'`) are the two Redis
// calls, one read of Postgres outside a transaction (the gateway's two unlocked reads, which it makes in
// parallel) and the HTTP request.
'use strict';

const http = require('node:http');
const path = require('node:path');
const { fork } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { sqlLiteral } = require('@bus/db');
const { percentile } = require('./support');

if (require.main === module && process.argv[2] === 'answer-202') {
  http
    .createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(202, { 'Content-Type': 'application/json' }).end('{"accepted":true}'));
    })
    .listen(0, '127.0.0.1', function listening() {
      process.send(this.address().port);
    });
  process.on('disconnect', () => process.exit(0));
}

/**
 * Opens the raw clients. `chain(i, body)` makes one publish's (or validate's) round trips; `stepMedians(n)` says each
 * step's p50 over the last `n` chains.
 */
async function openRoundTrips({ databaseUrl, redisUrl, producer, topic, route = 'messages' }) {
  const { Client } = require('pg');
  const Redis = require('ioredis');
  const { sendAcked } = require('@bus/kafka');
  const server = fork(path.join(__dirname, 'round-trips.js'), ['answer-202'], { stdio: 'ignore' });
  const port = await new Promise((resolve) => server.once('message', resolve));
  const agent = new http.Agent({ keepAlive: true });
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  await pg.query('CREATE TEMP TABLE floor_acceptances (id bigint PRIMARY KEY, body text)');
  const redis = new Redis(redisUrl, { keyPrefix: 'bench-floor:' });

  const steps = [];
  const publishChain = async (i, body) => {
    const started = performance.now();
    await redis.incr('host');
    await redis.incr('connection');
    const counted = performance.now();
    await pg.query(`BEGIN; SELECT pg_advisory_xact_lock(${i % 256}); SELECT id FROM floor_acceptances WHERE id = ${i}; SELECT 1`);
    const read = performance.now();
    await sendAcked(producer, { topic, key: `floor-${i % 256}`, value: body, headers: {} });
    const sent = performance.now();
    await pg.query(`INSERT INTO floor_acceptances VALUES (${i}, ${sqlLiteral(String(body))}); COMMIT`);
    const committed = performance.now();
    await post(body);
    steps.push({ redis: counted - started, postgres: read - counted + (committed - sent), kafka: sent - read, http: performance.now() - committed });
  };
  const validateChain = async (i, body) => {
    const started = performance.now();
    await redis.incr('host');
    await redis.incr('connection');
    const counted = performance.now();
    await pg.query(`SELECT id FROM floor_acceptances WHERE id = ${i}; SELECT 1`);
    const read = performance.now();
    await post(body);
    steps.push({ redis: counted - started, postgres: read - counted, http: performance.now() - read });
  };
  const chain = route === 'validate' ? validateChain : publishChain;
  const stepMedians = (n) =>
    (route === 'validate' ? ['redis', 'postgres', 'http'] : ['redis', 'postgres', 'kafka', 'http'])
      .map((step) => {
        const sorted = steps
          .slice(-n)
          .map((s) => s[step])
          .sort((a, b) => a - b);
        return `${step} ${percentile(sorted, 50).toFixed(2)}`;
      })
      .join(', ');
  const close = async () => {
    server.kill();
    agent.destroy();
    await pg.end();
    redis.disconnect();
  };
  return { chain, stepMedians, close };
}

module.exports = { openRoundTrips };
