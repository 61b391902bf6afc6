/**
 * The README's quick start, run as a newcomer runs it: the ```sh blocks marked
 * `<!-- walkthrough: <name> -->` are pasted, in order, into one bash (errexit, nounset, pipefail) in a
 * checkout whose `.local/` holds what `npm run up` writes there for a bus of this test's own: the demo
 * tenant (.local/demo.env, by the very seed.js `npm run up` runs) and the operator's busctl variables
 * (.local/operator.env). What the blocks print is what the user sees, and what is asserted: HTTP
 * statuses, the bodies, the received envelopes, busctl's output. A command that breaks, or prints
 * something else than the README promises, fails this test.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { som } from '@bus/schemas';
import { REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { deliveryCaughtUp } from './support/delivery';
import { runInShell, walkthroughBlocks, walkthroughCheckout, walkthroughFailure, type Walkthrough } from './support/walkthrough';

/** The whole walk-through's bound: its long polls wait up to 20 s each when something is missing. */
const WALKTHROUGH_TIMEOUT_MS = 150_000;
const BLOCKS = ['demo', 'token', 'story', 'publish', 'receive', 'busctl', 'aws'];

interface Envelope {
  message_id: string;
  message_type: string;
  correlation_id: string;
  system_id: string;
  payload: Record<string, unknown>;
}
interface Received {
  receipt_handle: string;
  message_id: string;
  message_type: string;
  receive_count: number;
  envelope: Envelope;
}

/** A line `curl -w ' %{http_code}\n'` printed: the JSON body, then the status. */
function answer(line: string): { status: number; body: Record<string, unknown> } {
  const cut = line.lastIndexOf(' ');
  return { status: Number(line.slice(cut + 1)), body: JSON.parse(line.slice(0, cut)) as Record<string, unknown> };
}

const linesOf = (text: string | undefined): string[] => (text ?? '').split('\n').filter((l) => l !== '');

let bus: RunningBus;
let checkout: string;
let startOutput: string;
let demoEnv: Record<string, string>;
let ran: Walkthrough;
let story: Envelope[];

beforeAll(async () => {
  bus = await startBus();
  const prepared = await walkthroughCheckout(bus);
  checkout = prepared.checkout;
  startOutput = prepared.startOutput;
  demoEnv = prepared.demoEnv;
  // Delivery first reads the shared topic's history; the walk-through's long polls wait 20 s at most.
  await deliveryCaughtUp(bus);
  ran = await runInShell(checkout, walkthroughBlocks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')), WALKTHROUGH_TIMEOUT_MS);
  // Read even when a block failed, so the first test reports the shell's exit and stderr.
  const storyFile = path.join(checkout, '.local/story.ndjson');
  story = existsSync(storyFile) ? linesOf(readFileSync(storyFile, 'utf8')).map((l) => JSON.parse(l) as Envelope) : [];
}, WALKTHROUGH_TIMEOUT_MS + 180_000);

afterAll(async () => {
  await bus?.stop();
  if (checkout) rmSync(checkout, { recursive: true, force: true });
}, 30_000);

describe("the README's quick start, run in a shell against a bus of its own", () => {
  it('has the walk-through blocks, and every command in them succeeds', () => {
    expect(walkthroughBlocks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8')).map((b) => b.name)).toEqual(BLOCKS);
    const failure = walkthroughFailure(ran);
    if (failure) throw failure;
    expect(Object.keys(ran.sections)).toEqual(BLOCKS);
  });

  it('npm run demo publishes the example story and prints it received once, in order, and acked', () => {
    const out = ran.sections.demo ?? '';
    const published = [...out.matchAll(/^ {2}published {2}(\d{3}) {2}(\S+)/gm)].map((m) => [m[1], m[2]]);
    const received = [...out.matchAll(/^ {2}received {3}(\S+) .* acked$/gm)].map((m) => m[1]);
    const types = som.story.map((m) => (m as Envelope).message_type);
    expect(published).toEqual(types.map((t) => ['202', t]));
    expect(received).toEqual(types);
    expect(out).toContain(`all ${types.length} messages received once, in publishing order, and acked`);
  });

  it('gets the demo producer a token and shows the key set that verifies it', () => {
    expect(JSON.parse(ran.sections.token ?? '')).toMatchObject({ keys: [expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })] });
  });

  it('prints the example story for the demo app: in order, one fresh correlation id, fresh message ids with the references following, its system_id', () => {
    const examples = som.story as Envelope[];
    expect(story.map((m) => m.message_type)).toEqual(examples.map((m) => m.message_type));
    expect(linesOf(ran.sections.story)).toEqual(story.map((m) => `"message_type":"${m.message_type}","correlation_id":"${m.correlation_id}"`));
    const [correlationId] = new Set(story.map((m) => m.correlation_id));
    expect(new Set(story.map((m) => m.correlation_id)).size).toBe(1);
    expect(correlationId).not.toBe(examples[0]?.correlation_id);
    expect(story.every((m) => m.system_id === demoEnv.BUS_SYSTEM_ID)).toBe(true);
    const ids = new Set(story.map((m) => m.message_id));
    expect(story.filter((m, i) => ids.has(m.message_id) && m.message_id !== examples[i]?.message_id)).toHaveLength(story.length);
    const byType = (type: string) => story.find((m) => m.message_type === type) as Envelope;
    expect(byType('skill.warning.raised').payload.trigger).toEqual({
      message_id: byType('telling.exposed').message_id,
      message_type: 'telling.exposed',
      correlation_id: correlationId,
    });
    expect(byType('system.audit').payload.subject).toEqual({
      message_id: byType('link.withdrawn').message_id,
      message_type: 'link.withdrawn',
      correlation_id: correlationId,
    });
  });

  it('dry-runs an example as it is (403), the end before the start (409) and the first message (202), then publishes the story: 202 each', () => {
    const [asItIs, endFirst, dryRun, ...published] = linesOf(ran.sections.publish).map(answer);
    expect(asItIs).toMatchObject({ status: 403, body: { accepted: false, violations: [expect.objectContaining({ rule: 'policy.system_id_not_allowed' })] } });
    expect(endFirst).toMatchObject({ status: 409, body: { accepted: false, violations: [expect.objectContaining({ rule: 'sequence.telling.not_started' })] } });
    expect(dryRun).toEqual({
      status: 202,
      body: { accepted: true, message_id: story[0]?.message_id, message_type: 'story.context', family: null, dry_run: true },
    });
    expect(published.map((a) => [a.status, a.body.accepted, a.body.message_id])).toEqual(story.map((m) => [202, true, m.message_id]));
  });

  it("receives the story's first message, nacks it, receives it again (receive_count 2) with the rest in order, and acks them", () => {
    const out = ran.sections.receive ?? '';
    const nackAt = out.indexOf('\n{"results"');
    const first = JSON.parse(out.slice(0, nackAt)) as Received;
    expect(first).toMatchObject({ message_id: story[0]?.message_id, message_type: 'story.context', receive_count: 1 });
    expect(first.envelope).toEqual({ ...story[0], payload: '…' });

    const [nack, ...rest] = linesOf(out.slice(nackAt));
    expect(answer(nack as string)).toEqual({ status: 200, body: { results: [{ receipt_handle: first.receipt_handle, status: 'done' }] } });

    // The second receive, as the ack used it: the nacked head again, then the story after it, whole envelopes.
    const { messages } = JSON.parse(readFileSync(path.join(checkout, '.local/received.json'), 'utf8')) as { messages: Received[] };
    expect(messages.length).toBeGreaterThanOrEqual(1);
    expect(messages.map((m) => m.envelope)).toEqual(story.slice(0, messages.length));
    expect(messages.map((m) => m.receive_count)).toEqual(messages.map((_, i) => (i === 0 ? 2 : 1)));
    const ack = answer(rest.at(-1) as string);
    expect(rest.slice(0, -1)).toEqual(messages.map((m) => `${m.message_type} receive_count ${m.receive_count}`));
    expect(ack).toEqual({ status: 200, body: { results: messages.map((m) => ({ receipt_handle: m.receipt_handle, status: 'done' })) } });
  });

  it('creates organisation, workspace, app, permissions and a producer with busctl, and publishes an example as it is: 202', () => {
    const lines = linesOf(ran.sections.busctl);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^system_ids +storyteller\.web$/),
        expect.stringMatching(/^message_types +telling\.ended, telling\.exposed, telling\.started$/),
      ]),
    );
    const example = som.examples['telling.started'] as Envelope;
    expect(answer(lines.at(-1) as string)).toEqual({
      status: 202,
      body: { accepted: true, message_id: example.message_id, message_type: 'telling.started', family: 'telling' },
    });
  });

  it("registers and verifies an AWS principal on step 5's producer and consumer, publishes signed with SigV4 (202), and reads both messages over SQS in order, the producer's exact bytes, then deletes them", async () => {
    const example = (file: string) => readFileSync(path.join(REPO_ROOT, 'schemas/som/1.0/examples', file), 'utf8');
    const started = example('03-telling.started.json');
    const exposed = example('06-telling.exposed.json');
    const [producer, consumer] = ['producer', 'consumer'].map(
      (c) => (JSON.parse(readFileSync(path.join(checkout, `.local/${c}.json`), 'utf8')) as { client_id: string }).client_id,
    );
    const [verifiedProducer, published, verifiedConsumer, ...received] = linesOf(ran.sections.aws);
    const verified = (clientId: string | undefined) => ({
      status: 200,
      body: expect.objectContaining({ client_id: clientId, role_arn: expect.stringMatching(/^arn:aws:iam::123456789012:role\//), status: 'verified' }),
    });
    expect(answer(verifiedProducer as string)).toEqual(verified(producer));
    expect(answer(published as string)).toEqual({
      status: 202,
      body: { accepted: true, message_id: JSON.parse(exposed).message_id, message_type: 'telling.exposed', family: 'telling' },
    });
    expect(answer(verifiedConsumer as string)).toEqual(verified(consumer));
    expect(received.map((line) => JSON.parse(line))).toEqual(
      [started, exposed].map((body) => ({ message_id: JSON.parse(body).message_id, correlation_id: 'session-7f3a9c', receive_count: 1, body })),
    );
    // Deleted, not merely leased: nothing is left in the queue, visible or not.
    const reader = JSON.parse(readFileSync(path.join(checkout, '.local/storyteller-reader.json'), 'utf8')) as {
      access_key_id: string;
      secret_access_key: string;
    };
    const sqs = new SQSClient({
      endpoint: `${bus.busUrl}/v1/sqs`,
      region: 'us-east-1',
      credentials: { accessKeyId: reader.access_key_id, secretAccessKey: reader.secret_access_key },
    });
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: consumer }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    expect(Attributes).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });

  it('started the bus and seeded the demo tenant without a Node or kafkajs warning or an error-level line', () => {
    expect(startOutput).toContain('"msg":"listening"');
    expect(startOutput).not.toMatch(/TimeoutNegativeWarning|switched default partitioner|"level":"(warn|error|fatal)"/);
  });
});
