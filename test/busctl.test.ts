import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseCtrf, validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { BusConsumer, BusProducer, type ReceivedMessage } from '@bus/client';
import { som } from '@bus/schemas';
import { generateStories, MESSAGE_TYPES } from '@bus/som';
import { eventually, REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { runCommand, type Ran } from './support/command';
import { junitSchemaErrors } from './support/junit-schema';
import { TenantFixture, type Tenant } from './support/tenants';

const BUSCTL = path.join(REPO_ROOT, 'cli/busctl/dist/main.js');
const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/busctl');
// The catalogue's own problem string for the typo in skills-invalid.yaml (services/catalogue tests).
const LOCALE_PROBLEM = 'values.locale_path: "story.langauge" is not a path of SOM 1.0 story.context';

let bus: RunningBus;
let operatorEnv: Record<string, string>;

beforeAll(async () => {
  bus = await startBus();
  operatorEnv = {
    BUSCTL_URL: bus.portalUrl,
    BUSCTL_CLIENT_ID: bus.env.OPERATOR_CLIENT_ID as string,
    BUSCTL_CLIENT_SECRET: bus.env.OPERATOR_CLIENT_SECRET as string,
  };
}, 120_000);
afterAll(async () => {
  await bus?.stop();
}, 30_000);

/** The compiled CLI as an operator runs it: its own process, configured by environment only. */
function busctl(args: string[], env: Record<string, string> = operatorEnv): Promise<Ran> {
  return runCommand(process.execPath, [BUSCTL, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: REPO_ROOT, timeout: 30_000 });
}

/** busctl … --json, expecting exit 0: the API's body. */
async function json<T>(args: string[]): Promise<T> {
  const ran = await busctl([...args, '--json']);
  expect({ code: ran.code, stderr: ran.stderr }).toMatchObject({ code: 0 });
  return JSON.parse(ran.stdout) as T;
}

async function ok(args: string[]): Promise<string> {
  const ran = await busctl(args);
  expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
  return ran.stdout;
}

describe('busctl against the running bus (compiled all-in-one and CLI)', () => {
  it('runs an operator flow: tenancy, permissions, credentials, tiers, registrations, queue, replay', async () => {
    const testStart = new Date().toISOString();
    const org = await json<{ id: string }>(['org', 'create', '--name', 'Harbour Tales', '--kind', 'house', '--tier', 'standard']);
    expect(await ok(['org', 'list'])).toMatch(
      new RegExp(`^ID +NAME +KIND +QUOTA +CREATED_AT\\n(.*\\n)*${org.id} +Harbour Tales +house +standard \\(20/s`, 'm'),
    );

    const workspace = await json<{ id: string }>(['workspace', 'create', '--org', org.id, '--name', 'Sandbox']);
    expect(await ok(['workspace', 'list', '--org', org.id])).toContain(workspace.id);

    const appOut = await ok(['app', 'create', '--workspace', workspace.id, '--name', 'Reader']);
    const appId = /^id +(a[a-z2-7]{12})$/m.exec(appOut)?.[1] as string;
    expect(appId).toBeDefined();
    expect(await ok(['app', 'list', '--workspace', workspace.id])).toContain(appId);

    const permissions = await ok(['permission', 'set', '--app', appId, '--system-id', 'storyteller.web', '--message-type', 'telling.started,telling.ended']);
    expect(permissions).toMatch(/^system_ids +storyteller\.web$/m);
    expect(permissions).toMatch(/^message_types +telling\.ended, telling\.started$/m);
    expect(await ok(['permission', 'show', '--app', appId])).toBe(permissions);

    // The secret comes once, in the --json body; the note saying so goes to stderr.
    const created = await busctl(['connection', 'create', '--app', appId, '--kind', 'consumer', '--name', 'Reader', '--json']);
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(/only time the client secret is shown/);
    const issued = JSON.parse(created.stdout) as { client_id: string; client_secret: string; credential_version: number };
    expect(issued).toMatchObject({ client_id: expect.stringMatching(/^c[a-z2-7]{12}$/), client_secret: expect.stringMatching(/^sbs_/), credential_version: 1 });
    const consumer = issued.client_id;
    expect(await tokenStatus(consumer, issued.client_secret)).toBe(200);
    const listed = await ok(['connection', 'list', '--app', appId]);
    // Its name, and when it was created and last used (the token's use may be written a moment after its answer).
    expect(listed).toMatch(new RegExp(`^${consumer} +Reader +consumer +active +${appId} +${workspace.id} +\\d{4}-\\S+ +(\\d{4}-\\S+|-)$`, 'm'));
    expect(listed).not.toContain(issued.client_secret);
    const described = await ok(['connection', 'describe', consumer, '--name', 'Web reader', '--description', 'Reads the web tellings']);
    expect(described).toMatch(/^name +Web reader$/m);
    expect(described).toMatch(/^description +Reads the web tellings$/m);

    const tier = await ok(['tier', 'set', '--workspace', workspace.id, 'custom', '--per-second', '50', '--burst', '100', '--per-day', '200000']);
    expect(tier).toMatch(/^quota +custom \(50\/s, bursts of 100, 200,000\/day\)$/m);

    const rotated = await ok(['credential', 'rotate', consumer, '--overlap', '1h']);
    const newSecret = /^client_secret +(sbs_\S+)$/m.exec(rotated)?.[1] as string;
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(issued.client_secret);
    expect(rotated).toMatch(/^credential_version +2$/m);
    const until = Date.parse(/^previous_secret_usable_until +(\S+)$/m.exec(rotated)?.[1] as string);
    expect(until - Date.now()).toBeGreaterThan(3_500_000);
    expect(until - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(rotated).toMatch(/only time the client secret is shown/);
    expect(await tokenStatus(consumer, newSecret)).toBe(200);
    expect(await tokenStatus(consumer, issued.client_secret)).toBe(200); // within the overlap

    const added = await ok(['registration', 'add', '--consumer', consumer, '-f', path.join(FIXTURES, 'skills-valid.yaml')]);
    const registrationId = new RegExp(`^(r[a-z2-7]{12}) +telling/pacing +- +speaker pacing `, 'm').exec(added)?.[1] as string;
    expect(registrationId).toBeDefined();
    expect(await ok(['registration', 'list', '--consumer', consumer])).toContain(registrationId);

    const refused = await busctl(['registration', 'add', '--consumer', consumer, '-f', path.join(FIXTURES, 'skills-invalid.yaml')]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^busctl: the API refused \(422 registration\.invalid\): /);
    expect(refused.stderr).toContain('  instance 0 (locale telling/locale-match): invalid\n');
    expect(refused.stderr).toContain(`    - ${LOCALE_PROBLEM}\n`);
    expect(await ok(['registration', 'list', '--consumer', consumer])).not.toContain('locale');

    expect(await ok(['queue', 'stats', '--consumer', consumer])).toBe(
      `client_id     ${consumer}\ndepth         0\nin_flight     0\ndead_letters  0\noldest_age    -\n`,
    );

    // The messages topic is shared by every bus on this Kafka, so a replay since an hour ago may scan
    // other tests' traffic for a while: that one is only started; the one waited for starts with this test.
    const started = await busctl(['replay', '--consumer', consumer, '--since', '1h', '--no-wait']);
    expect(started).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^replay_id +p[a-z2-7]{12}\n(.*\n)*status +running\n/m) });
    const replay = await busctl(['replay', '--consumer', consumer, '--since', testStart]);
    expect(replay.code).toBe(0);
    expect(replay.stderr).toMatch(/^Replay p[a-z2-7]{12} started; waiting/);
    expect(replay.stdout).toMatch(/^status +succeeded\nscanned +0\nreplayed +0\nskipped +0\n/m);

    expect(await ok(['registration', 'remove', '--consumer', consumer, registrationId])).toBe(`Removed registration ${registrationId} from ${consumer}.\n`);
    expect(await ok(['credential', 'revoke', consumer])).toMatch(/^status +revoked$/m);
    // The token service learns of the revocation over the control topic (goal ≤ 2 s).
    await eventually(
      () => tokenStatus(consumer, newSecret),
      (status) => status === 401,
      { timeoutMs: 10_000, intervalMs: 200, what: 'the revoked secret refused' },
    );
  }, 120_000);

  it('exits 1 with the API code for a refusal, and says which variables to check on 401', async () => {
    const missing = await busctl(['connection', 'show', 'caaaaaaaaaaaa']);
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^busctl: the API refused \(404 admin\.not_found\): No connection "caaaaaaaaaaaa" \[request \S+\]\n$/),
    });

    const wrong = await busctl(['org', 'list'], { ...operatorEnv, BUSCTL_CLIENT_SECRET: 'not-the-secret' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^busctl: the API refused \(401 admin\.unauthorized\): .*\nCheck BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET/);
    expect(wrong.stderr).not.toContain('not-the-secret');
  }, 30_000);

  it('exits 2 for usage errors and missing credentials, before calling the API', async () => {
    expect(await busctl(['tier', 'set', '--workspace', 'w1', 'gold'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^busctl: the tier must be one of .*\n\nbusctl tier set: /),
    });
    expect(await busctl(['org', 'list'], { BUSCTL_URL: bus.portalUrl, BUSCTL_CLIENT_ID: 'operator' })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'busctl: BUSCTL_CLIENT_SECRET is not set: the operator client secret\n',
    });
    expect(await busctl(['connection', 'create', '--help'], {})).toMatchObject({ code: 0, stdout: expect.stringMatching(/^busctl connection create: /) });
  }, 30_000);
});

describe('busctl validate and story export against the running bus (a producer connection: the validate and export routes)', () => {
  let tenants: TenantFixture;
  let house: Tenant;
  let producerEnv: Record<string, string>;
  const dir = mkdtempSync(path.join(tmpdir(), 'busctl-validate-'));

  beforeAll(async () => {
    tenants = await TenantFixture.create(bus);
    house = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: Object.keys(som.examples) });
    producerEnv = { BUS_BASE_URL: bus.busUrl, BUS_PRODUCER_CLIENT_ID: house.producer.clientId, BUS_PRODUCER_CLIENT_SECRET: house.producer.clientSecret };
  }, 60_000);
  afterAll(async () => {
    await tenants?.close();
  });

  /** A story of one telling on a fresh correlation id, one file a message, named in publish order. */
  function story(name: string, types: string[]): string {
    const folder = path.join(dir, name);
    mkdirSync(folder);
    const correlationId = `story-${randomUUID()}`;
    types.forEach((type, i) => {
      const message = { ...(som.examples[type] as object), message_id: randomUUID(), correlation_id: correlationId };
      writeFileSync(path.join(folder, `${String(i + 1).padStart(2, '0')}-${type}.json`), JSON.stringify(message));
    });
    return folder;
  }

  it("checks a corpus, exits 1 on a refusal, and writes reports that the formats' own parsers read and their schemas accept", async () => {
    const corpus = story('corpus', ['story.context', 'telling.started']);
    writeFileSync(path.join(corpus, '03-broken.json'), JSON.stringify({ ...(som.examples['story.context'] as object), message_id: 'not-a-uuid' }));
    const junitFile = path.join(dir, 'junit.xml');
    const ctrfFile = path.join(dir, 'ctrf.json');

    const ran = await busctl(['validate', corpus, '--junit', junitFile, '--ctrf', ctrfFile], producerEnv);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/01-story\.context\.json +story\.context +accepted\n/);
    expect(ran.stdout).toMatch(/02-telling\.started\.json +telling\.started +accepted\n/);
    expect(ran.stdout).toMatch(/03-broken\.json +story\.context +refused 400 schema\.format \/message_id\n/);
    expect(ran.stdout).toContain('3 checked: 2 accepted, 1 refused, 0 not checked');

    const junit = (await parseJunit(readFileSync(junitFile, 'utf8'))) as {
      tests: number;
      failures: number;
      testsuite: Array<{ name: string; testcase: Array<{ name: string; failure?: Array<{ message: string; inner: string }> }> }>;
    };
    expect(junit).toMatchObject({ tests: 3, failures: 1 });
    expect(await junitSchemaErrors(readFileSync(junitFile, 'utf8'))).toEqual([]);
    const failed = junit.testsuite.flatMap((s) => s.testcase).find((c) => c.failure !== undefined);
    expect(failed?.name).toBe(path.join(corpus, '03-broken.json'));
    expect(failed?.failure?.[0]).toMatchObject({ message: '400 schema.format', inner: expect.stringContaining('schema.format /message_id') });

    const ctrfText = readFileSync(ctrfFile, 'utf8');
    expect(validateCtrf(JSON.parse(ctrfText))).toMatchObject({ valid: true });
    expect(parseCtrf(ctrfText).results.summary).toMatchObject({ tests: 3, passed: 2, failed: 1 });
  }, 60_000);

  it('--ordered checks a story against the state its earlier files make, recording nothing', async () => {
    const telling = story('ordered', ['telling.started', 'telling.exposed', 'telling.ended']);
    // Each file on its own meets the workspace, where this telling never started.
    const alone = await busctl(['validate', telling], producerEnv);
    expect(alone.code).toBe(1);
    expect(alone.stdout).toMatch(/02-telling\.exposed\.json +telling\.exposed +refused 409 sequence\.telling\.not_started/);

    expect(await busctl(['validate', '--ordered', telling], producerEnv)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('3 checked: 3 accepted, 0 refused'),
    });
    // Twice: nothing of the first run was recorded.
    expect(await busctl(['validate', '--ordered', telling], producerEnv)).toMatchObject({ code: 0 });
    const outOfOrder = story('out-of-order', ['telling.started', 'telling.ended', 'telling.exposed']);
    const refused = await busctl(['validate', '--ordered', outOfOrder, '--json'], producerEnv);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject([
      { outcome: 'accepted' },
      { outcome: 'accepted' },
      { outcome: 'refused', status: 409, violations: [{ rule: 'sequence.telling.ended' }] },
    ]);
  }, 60_000);

  it('says which variable is wrong when the token route refuses the credentials', async () => {
    const ran = await busctl(['validate', path.join(dir, 'corpus')], { ...producerEnv, BUS_PRODUCER_CLIENT_SECRET: 'sbs_wrong' });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^busctl: no token for BUS_PRODUCER_CLIENT_ID: token route answered 401 invalid_client/);
    expect(ran.stderr).not.toContain('sbs_wrong');
  }, 30_000);

  it("writes what a story exchanged to --out: the bytes published, the consumer's receive and ack", async () => {
    const correlationId = `story-${randomUUID()}`;
    const bytes = JSON.stringify({ ...(som.examples['telling.started'] as object), message_id: randomUUID(), correlation_id: correlationId }, null, 2);
    expect((await new BusProducer({ baseUrl: bus.busUrl, ...house.producer }).publish(bytes)).status).toBe(202);
    const consumer = new BusConsumer({ baseUrl: bus.busUrl, ...house.consumer });
    const [got] = await eventually(
      () => consumer.receive({ waitSeconds: 5 }),
      (ms) => ms.length > 0,
      { timeoutMs: 30_000, what: 'the published message' },
    );
    await consumer.ack([got!.receipt_handle]);

    const out = path.join(mkdtempSync(path.join(tmpdir(), 'busctl-story-')), 'story.ndjson');
    const ran = await busctl(['story', 'export', correlationId, '--out', out], producerEnv);
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(new RegExp(`^story ${correlationId}: 1 messages, 1 deliveries, \\d+ bytes to ${out}\\n$`));
    const lines = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.type)).toEqual(['story', 'message', 'delivery', 'end']);
    expect(lines[1]).toMatchObject({ body: bytes, stored: true });
    expect(lines[2]).toMatchObject({ consumer_id: house.consumer.clientId, receive_count: 1, acked: true });
  }, 60_000);

  it('exits 1 with the rule for a correlation id the workspace never saw', async () => {
    const ran = await busctl(['story', 'export', `never-${randomUUID()}`], producerEnv);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^busctl: the bus refused \(404 story\.unknown: /);
    expect(ran.stdout).toBe('');
  });
});

describe('busctl simulate against the running bus (a producer connection publishes, the consumer of the same app receives)', () => {
  const SYSTEM_ID = 'storyteller.web';
  let tenants: TenantFixture;
  let house: Tenant;

  beforeAll(async () => {
    tenants = await TenantFixture.create(bus);
    house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: [...MESSAGE_TYPES] });
  }, 60_000);
  afterAll(async () => {
    await tenants?.close();
  });

  /** What busctl simulate reads of a tenant's producer connection. */
  const producerEnv = (tenant: Tenant) => ({
    BUS_BASE_URL: bus.busUrl,
    BUS_PRODUCER_CLIENT_ID: tenant.producer.clientId,
    BUS_PRODUCER_CLIENT_SECRET: tenant.producer.clientSecret,
    BUS_SYSTEM_ID: SYSTEM_ID,
  });

  it('publishes generated stories, all accepted, and the consumer receives each story in its order', async () => {
    const ran = await busctl(['simulate', '--stories', '5', '--rate', '20', '--seed', '42'], producerEnv(house));
    // The seed fixes ids and order whatever the clock, so the test knows the stories busctl made.
    const stories = generateStories({ seed: 42, stories: 5, systemId: SYSTEM_ID, now: new Date() });
    const total = stories.reduce((n, story) => n + story.messages.length, 0);
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toContain(`${total} messages of 5 stories: ${total} accepted, 0 duplicates, 0 refused, 0 not sent`);

    const consumer = new BusConsumer({ baseUrl: bus.busUrl, clientId: house.consumer.clientId, clientSecret: house.consumer.clientSecret });
    const received: ReceivedMessage[] = [];
    const receiveAndAck = async () => {
      const got = await consumer.receive({ maxMessages: 10, waitSeconds: 1 });
      received.push(...got);
      if (got.length > 0) await consumer.ack(got.map((m) => m.receipt_handle));
      return received.length;
    };
    await eventually(receiveAndAck, (n) => n >= total, { timeoutMs: 20_000, what: `${total} simulated messages received` });

    const inOrder = new Map<string, string[]>();
    for (const m of received) inOrder.set(m.correlation_id, [...(inOrder.get(m.correlation_id) ?? []), `${m.message_type} ${m.message_id}`]);
    expect(inOrder).toEqual(new Map(stories.map((story) => [story.correlation_id, story.messages.map((m) => `${m.message_type} ${m.message_id}`)])));
  }, 60_000);

  it('keeps to a tier slower than the pace asked: every message accepted, each 429 waited out as Retry-After says, no storm of them', async () => {
    const slow = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: [...MESSAGE_TYPES] });
    await ok(['tier', 'set', '--workspace', slow.workspaceId, 'custom', '--per-second', '5', '--burst', '5', '--per-day', '100000']);
    const ran = await busctl(['simulate', '--stories', '3', '--rate', '20', '--seed', '7'], producerEnv(slow));
    const total = generateStories({ seed: 7, stories: 3, systemId: SYSTEM_ID, now: new Date() }).reduce((n, story) => n + story.messages.length, 0);
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toContain(`${total} messages of 3 stories: ${total} accepted, 0 duplicates, 0 refused, 0 not sent`);
    // The bus counts its 429s per connection (the producer's refusals route). The tier was met (some 429s),
    // and each was waited out before the next try: a storm would meet one on most messages.
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...slow.producer });
    let previous = -1;
    const limited = await eventually(
      async () => (await producer.refusals()).rate_limited.rate_limited,
      (n) => {
        const settled = n > 0 && n === previous;
        previous = n;
        return settled;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: 'the rate-limited count recorded and settled' },
    );
    expect(limited).toBeLessThanOrEqual(Math.ceil(total / 4));
  }, 60_000);
});

/** The bus's token route for a client id and secret: 200 while the secret is good. */
async function tokenStatus(clientId: string, clientSecret: string): Promise<number> {
  const res = await fetch(`${bus.busUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  await res.arrayBuffer();
  return res.status;
}
