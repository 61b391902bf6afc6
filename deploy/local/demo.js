// `npm run demo`: the fastest way to see the bus work, against the bus `npm run up` runs. As the demo
// producer it publishes the example story under a fresh correlation id (deploy/local/example-story.js:
// the story's world, the telling's start, a media file, a gate opening, an exposure, a skill's
// warning about it, the telling's end, a link withdrawn and its audit); as the demo consumer it
// receives the story, acks each message and prints what arrived, in order. Exit 0 when every message
// came back once, in publishing order; 1 otherwise, saying what is wrong.
//
// Reads the demo tenant from .local/demo.env (written by `npm run up`; BUS_DEMO_ENV_FILE names another
// file). Messages of other correlation ids in the demo consumer's queue are left alone: not acked, they
// are received again once their lease (30 s) ends.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { exampleStory, freshCorrelationId } = require('./example-story');

const ENV_FILE = path.resolve(process.env.BUS_DEMO_ENV_FILE ?? '.local/demo.env');
const RECEIVE_DEADLINE_MS = 60_000;
const LEASE_SECONDS = 30;

class DemoError extends Error {}

/** The demo tenant's variables from the dotenv file `npm run up` writes. */
function readDemoEnv(file) {
  if (!fs.existsSync(file)) throw new DemoError(`no demo tenant: ${file} is missing. Start the bus first (npm run up), which writes it.`);
  const env = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  for (const name of ['BUS_BASE_URL', 'BUS_WORKSPACE_ID', 'BUS_SYSTEM_ID', 'BUS_PRODUCER_CLIENT_ID', 'BUS_PRODUCER_CLIENT_SECRET', 'BUS_CONSUMER_CLIENT_ID', 'BUS_CONSUMER_CLIENT_SECRET']) {
    if (!env[name]) throw new DemoError(`${file} has no ${name}; npm run up writes the demo tenant anew when the file is gone`);
  }
  return env;
}

/** fetch, with a refused connection said in the demo's words. */
async function call(url, init) {
  try {
    return await fetch(url, init);
  } catch (err) {
    throw new DemoError(`the bus at ${new URL(url).origin} does not answer (${err.cause?.code ?? err.message}): is npm run up running?`);
  }
}

async function expectStatus(res, status, what) {
  const body = await res.text();
  if (res.status !== status) throw new DemoError(`${what}: HTTP ${res.status} ${body}`);
  return body === '' ? undefined : JSON.parse(body);
}

async function token(env, who) {
  const id = env[`BUS_${who}_CLIENT_ID`];
  const secret = env[`BUS_${who}_CLIENT_SECRET`];
  const res = await call(`${env.BUS_BASE_URL}/v1/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  return (await expectStatus(res, 200, `token of the demo ${who.toLowerCase()} ${id}`)).access_token;
}

function line(...columns) {
  process.stdout.write(`${columns.join('  ')}\n`);
}

async function publish(env, producerToken, story) {
  const tenant = `${env.BUS_BASE_URL}/v1/tenants/${env.BUS_WORKSPACE_ID}`;
  line(`publishing the example story as ${env.BUS_PRODUCER_CLIENT_ID} (system_id ${env.BUS_SYSTEM_ID}), correlation_id ${story[0].correlation_id}`);
  for (const message of story) {
    const res = await call(`${tenant}/messages`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${producerToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(message),
    });
    await expectStatus(res, 202, `publish of ${message.message_type}`);
    line('  published', String(res.status), message.message_type.padEnd(24), message.message_id);
  }
}

/** Receives until every message of the story came, acking each; returns them in the order received. */
async function receiveStory(env, consumerToken, story) {
  const consumer = `${env.BUS_BASE_URL}/v1/tenants/${env.BUS_WORKSPACE_ID}/consumers/${env.BUS_CONSUMER_CLIENT_ID}`;
  const auth = { Authorization: `Bearer ${consumerToken}` };
  const correlationId = story[0].correlation_id;
  const received = [];
  let othersLeft = 0;
  line(`receiving as ${env.BUS_CONSUMER_CLIENT_ID}`);
  const deadline = Date.now() + RECEIVE_DEADLINE_MS;
  while (received.length < story.length) {
    if (Date.now() > deadline) throw new DemoError(`received ${received.length} of ${story.length} messages in ${RECEIVE_DEADLINE_MS / 1000} s`);
    const res = await call(`${consumer}/messages?max_messages=10&wait_seconds=5&visibility_timeout=${LEASE_SECONDS}`, { headers: auth });
    const { messages } = await expectStatus(res, 200, 'receive');
    const ours = messages.filter((m) => m.correlation_id === correlationId);
    othersLeft += messages.length - ours.length;
    if (ours.length === 0) {
      await sleep(100);
      continue;
    }
    const ack = await call(`${consumer}/ack`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ receipt_handles: ours.map((m) => m.receipt_handle) }),
    });
    const { results } = await expectStatus(ack, 200, 'ack');
    for (const [i, m] of ours.entries()) {
      if (results[i].status !== 'done') throw new DemoError(`ack of ${m.message_type} ${m.message_id}: ${results[i].code}`);
      received.push(m);
      line('  received ', m.message_type.padEnd(24), m.message_id, `receive_count ${m.receive_count}`, 'acked');
    }
  }
  if (othersLeft > 0) line(`  (${othersLeft} messages of other correlation ids were left in the queue, back in ${LEASE_SECONDS} s)`);
  return received;
}

async function main() {
  const env = readDemoEnv(ENV_FILE);
  const story = exampleStory({ correlationId: freshCorrelationId('demo'), systemId: env.BUS_SYSTEM_ID });
  const [producerToken, consumerToken] = [await token(env, 'PRODUCER'), await token(env, 'CONSUMER')];
  await publish(env, producerToken, story);
  const received = await receiveStory(env, consumerToken, story);
  const inOrder = received.every((m, i) => m.message_id === story[i].message_id);
  if (!inOrder) throw new DemoError('the story came back out of publishing order');
  line(`all ${story.length} messages received once, in publishing order, and acked. telling.started as the consumer got it:`);
  process.stdout.write(`${JSON.stringify(received.find((m) => m.message_type === 'telling.started'), null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`npm run demo: ${err instanceof DemoError ? err.message : err.stack}\n`);
  process.exit(1);
});
