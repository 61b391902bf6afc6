// `npm run demo`: the fastest way to see the bus work, against the bus `npm run up` runs. As the demo
// producer it publishes the example story under a fresh correlation id (deploy/local/example-story.js:
// the story's world, the telling's start, a media file, a gate opening, an exposure, a skill's
// warning about it, the telling's end, a link withdrawn and its audit); as the demo consumer it
// receives the story, acks each message and prints what arrived, in order. Both through libs/client
// (@bus/client), as a tester's own code would. Exit 0 when every message
// came back once, in publishing order; 1 otherwise, saying what is wrong.
//
// Reads the demo tenant from .local/demo.env (written by `npm run up`; BUS_DEMO_ENV_FILE names another
// file). Messages of other correlation ids in the demo consumer's queue are left alone: nacked with a
// 30 s delay, they are received again after it.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { BusConsumer, BusProducer, BusRefusedError, BusUnreachableError, TokenRequestError } = require('@bus/client');
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
  for (const name of [
    'BUS_BASE_URL',
    'BUS_WORKSPACE_ID',
    'BUS_SYSTEM_ID',
    'BUS_PRODUCER_CLIENT_ID',
    'BUS_PRODUCER_CLIENT_SECRET',
    'BUS_CONSUMER_CLIENT_ID',
    'BUS_CONSUMER_CLIENT_SECRET',
  ]) {
    if (!env[name]) throw new DemoError(`${file} has no ${name}; npm run up writes the demo tenant anew when the file is gone`);
  }
  return env;
}

/** The client's options for the demo producer or consumer (libs/client: it fetches and renews the token). */
function connection(env, who) {
  return { baseUrl: env.BUS_BASE_URL, clientId: env[`BUS_${who}_CLIENT_ID`], clientSecret: env[`BUS_${who}_CLIENT_SECRET`], maxAttempts: 3 };
}

function line(...columns) {
  process.stdout.write(`${columns.join('  ')}\n`);
}

async function publish(env, story) {
  const producer = new BusProducer(connection(env, 'PRODUCER'));
  line(`publishing the example story as ${env.BUS_PRODUCER_CLIENT_ID} (system_id ${env.BUS_SYSTEM_ID}), correlation_id ${story[0].correlation_id}`);
  for (const message of story) {
    const result = await producer.publish(message);
    line('  published', String(result.status), message.message_type.padEnd(24), message.message_id);
  }
}

/**
 * Runs the demo consumer until every message of the story came; the client acks each one the handler
 * took. Messages of other correlation ids are handed back (nacked) for LEASE_SECONDS, as a lease would.
 */
async function receiveStory(env, story) {
  const correlationId = story[0].correlation_id;
  const received = [];
  const settleErrors = [];
  let othersLeft = 0;
  const notOurs = new Error('another correlation id');
  const consumer = new BusConsumer({
    ...connection(env, 'CONSUMER'),
    waitSeconds: 5,
    visibilityTimeoutSeconds: LEASE_SECONDS,
    nackDelaySeconds: LEASE_SECONDS,
    onError: (err, { stage }) => {
      if (stage === 'settle') settleErrors.push(err);
    },
  });
  line(`receiving as ${env.BUS_CONSUMER_CLIENT_ID}`);
  const deadline = setTimeout(() => void consumer.stop(), RECEIVE_DEADLINE_MS);
  try {
    await consumer.run((m) => {
      if (m.correlation_id !== correlationId) {
        othersLeft += 1;
        throw notOurs;
      }
      received.push(m);
      if (received.length === story.length) void consumer.stop();
    });
  } finally {
    clearTimeout(deadline);
  }
  if (settleErrors.length > 0) throw new DemoError(`ack: ${settleErrors[0].message}`);
  if (received.length < story.length) throw new DemoError(`received ${received.length} of ${story.length} messages in ${RECEIVE_DEADLINE_MS / 1000} s`);
  for (const m of received) line('  received ', m.message_type.padEnd(24), m.message_id, `receive_count ${m.receive_count}`, 'acked');
  if (othersLeft > 0) line(`  (${othersLeft} messages of other correlation ids were left in the queue, back in ${LEASE_SECONDS} s)`);
  return received;
}

async function main() {
  const env = readDemoEnv(ENV_FILE);
  const story = exampleStory({ correlationId: freshCorrelationId('demo'), systemId: env.BUS_SYSTEM_ID });
  await publish(env, story);
  const received = await receiveStory(env, story);
  const inOrder = received.every((m, i) => m.message_id === story[i].message_id);
  if (!inOrder) throw new DemoError('the story came back out of publishing order');
  line(`all ${story.length} messages received once, in publishing order, and acked. telling.started as the consumer got it:`);
  process.stdout.write(
    `${JSON.stringify(
      received.find((m) => m.message_type === 'telling.started'),
      null,
      2,
    )}\n`,
  );
}

/** What went wrong, in the demo's words: a refusal's status and rule, a bus that does not answer. */
function explain(err) {
  if (err instanceof DemoError || err instanceof TokenRequestError) return err.message;
  if (err instanceof BusUnreachableError) return `${err.message}: is npm run up running?`;
  if (err instanceof BusRefusedError) return `the bus refused: ${err.message}`;
  return err.stack;
}

main().catch((err) => {
  process.stderr.write(`npm run demo: ${explain(err)}\n`);
  process.exit(1);
});
