import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import {
  createConsumer,
  createKafka,
  createProducer,
  decodeMessageHeaders,
  ensureTopics,
  runBatches,
  type Kafka,
  type MessageHeaders,
  type Producer,
} from '@bus/kafka';
import { som } from '@bus/schemas';
import { createSomValidator, EMPTY_STORY_STATE } from '@bus/som';
import { eventually, requireEnv } from '@bus/testing';
import { Registry } from 'prom-client';
import { CommitTimeoutError } from './deadline';
import { createGroupCommitter, type CommitToKafka } from './group-commit';
import { kafkaCommitter } from './kafka-commit';
import { publishMessage as publishDomain, type PublishDeps, type Publisher } from './publish';
import { publishOverHttp } from './publish-http';
import { KnexPublishStore } from './publish-store';

/** A publish as the routes answer it: the HTTP status and body, or the HTTP error (publish-http.ts). */
const publishMessage = (...args: Parameters<typeof publishDomain>) => publishOverHttp(publishDomain(...args));

const logger = pino({ level: 'warn' });
const topic = `test.publish.${randomBytes(4).toString('hex')}`;
const workspaceId = 'wpublishtest2';
const publisher: Publisher = { clientId: 'cpublishtest2', workspaceId, appId: 'apublishtest2' };
const batchPublisher: Publisher = { clientId: 'cpublishbatch', workspaceId: 'wpublishbatch', appId: 'apublishbatch' };

const database = useTestDatabase({ applicationName: 'publish-test', poolMax: 10 });
let db: Knex;
let kafka: Kafka;
let producer: Producer;
let deps: PublishDeps;
let sendToKafka: CommitToKafka;

/** The publish pipeline on the test's database and topic, with the commit's Kafka send, budget or log replaced if asked. */
function publishDeps(opts: { commitToKafka?: CommitToKafka; commitTimeoutMs?: number; logger?: pino.Logger } = {}): PublishDeps {
  const store = KnexPublishStore.create(db);
  return {
    store,
    validator: createSomValidator(),
    permissions: (appId) => store.permissions(appId),
    committer: createGroupCommitter({
      store,
      commitToKafka: opts.commitToKafka ?? sendToKafka,
      commitTimeoutMs: opts.commitTimeoutMs ?? 5_000,
      logger: opts.logger ?? logger,
      metrics: new Registry(),
    }),
    traceparent: () => null,
  };
}

beforeAll(async () => {
  db = database.db;
  const tenancy = database.tenancy;
  const { organisationId } = await tenancy.tenant({
    workspaceId,
    appId: publisher.appId,
    connections: [{ id: publisher.clientId, kind: 'producer' }],
    permissions: { systemIds: ['storyteller.web'], messageTypes: ['telling.started', 'telling.exposed', 'telling.ended'] },
  });
  // A second workspace, for the group-commit comparison: the same messages publish there as a batch.
  await tenancy.workspace({ id: batchPublisher.workspaceId, organisation_id: organisationId, name: 'W batch' });
  await tenancy.app({ id: batchPublisher.appId, workspace_id: batchPublisher.workspaceId, name: 'A batch' });
  await tenancy.connection({ id: batchPublisher.clientId, app_id: batchPublisher.appId, kind: 'producer' });
  kafka = createKafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'publish-test', logger });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ topic, numPartitions: 3, replicationFactor: 1 }]);
  await admin.disconnect();
  producer = createProducer(kafka);
  await producer.connect();
  sendToKafka = kafkaCommitter(producer, topic);
  deps = publishDeps();
}, 60_000);

database.beforeDrop(async () => {
  await producer?.disconnect();
});

/** A valid message of `type` on `correlationId`, from the schema examples, with a fresh message_id. */
type Example = Record<string, unknown> & { message_id: string; correlation_id: string; payload: Record<string, unknown> };
function message(type: 'telling.started' | 'telling.exposed' | 'telling.ended', correlationId: string, extra: Record<string, unknown> = {}): Example {
  const example = som.examples[type] as Example;
  return { ...example, message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString(), ...extra };
}
const bytes = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

async function refusal(run: Promise<unknown>) {
  const err = (await run.catch((e: unknown) => e)) as { status: number; violations(): Array<{ rule: string; source: string; path?: string }> };
  return { status: err.status, rules: err.violations().map((v) => v.rule) };
}

/** How many records the test topic holds, from the brokers' offsets: catches a record too many. */
async function topicSize(): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

/** Every record of the test topic, in partition order, read by a fresh consumer group. */
async function readTopic(expected: number): Promise<Array<{ key: string; value: string; headers: MessageHeaders }>> {
  const records: Array<{ key: string; value: string; headers: MessageHeaders }> = [];
  const consumer = createConsumer(kafka, { groupId: `${topic}.${randomBytes(3).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    if (expected === 0) resolve();
    void runBatches(consumer, async (record) => {
      records.push({ key: String(record.key), value: String(record.value), headers: decodeMessageHeaders(record.headers) });
      if (records.length === expected) resolve();
    });
  });
  await consumer.disconnect();
  return records;
}

describe('publishMessage on the real Postgres and Kafka', () => {
  const produced: string[] = [];

  it('accepts, commits to Kafka with the exact bytes and headers, and records the acceptance', async () => {
    const correlation = `c-${randomUUID()}`;
    const started = message('telling.started', correlation);
    // Deliberately odd spacing: the bus must publish these bytes, not a re-serialisation.
    const raw = Buffer.from(JSON.stringify(started, null, 3), 'utf8');
    const answer = await publishMessage(deps, publisher, raw, 'publish');
    produced.push(started.message_id);
    expect(answer).toEqual({
      status: 202,
      body: { accepted: true, message_id: started.message_id, message_type: 'telling.started', family: 'telling' },
    });
    const [record] = await readTopic(1);
    expect(record?.key).toBe(`${workspaceId}/${correlation}`);
    expect(record?.value).toBe(raw.toString('utf8'));
    expect(record?.headers).toMatchObject({
      workspace_id: workspaceId,
      message_id: started.message_id,
      message_type: 'telling.started',
      family: 'telling',
      producer_connection_id: publisher.clientId,
      content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const row = await db('accepted_messages').where({ workspace_id: workspaceId, message_id: started.message_id }).first();
    expect(row).toMatchObject({ content_hash: record?.headers.content_hash, correlation_id: correlation });
    // The SHA-256 of the exact bytes published, by which delivery recognises the record without parsing it.
    expect(row?.body_sha256).toEqual(createHash('sha256').update(raw).digest());
  }, 30_000);

  it('answers a resend 200 duplicate, even re-serialised, and publishes nothing new', async () => {
    const started = message('telling.started', `c-${randomUUID()}`);
    expect((await publishMessage(deps, publisher, bytes(started), 'publish')).status).toBe(202);
    produced.push(started.message_id);
    const reordered = Object.fromEntries(Object.entries(started).reverse());
    for (const body of [bytes(started), Buffer.from(JSON.stringify(reordered, null, 2))]) {
      expect(await publishMessage(deps, publisher, body, 'publish')).toEqual({
        status: 200,
        body: { accepted: true, duplicate: true, message_id: started.message_id },
      });
    }
    expect(await topicSize()).toBe(produced.length);
    expect((await readTopic(produced.length)).map((r) => r.headers.message_id).sort()).toEqual([...produced].sort());
  }, 30_000);

  it('refuses a reused message_id with other content with 409', async () => {
    const started = message('telling.started', `c-${randomUUID()}`);
    await publishMessage(deps, publisher, bytes(started), 'publish');
    produced.push(started.message_id);
    const changed = { ...started, system_id: 'storyteller.web', payload: { ...started.payload, channel: 'web' } };
    expect(await refusal(publishMessage(deps, publisher, bytes(changed), 'publish'))).toEqual({
      status: 409,
      rules: ['idempotency.message_id_reused'],
    });
  });

  it('refuses invalid SOM with 400 and every violation, a disallowed type with 403, a bad sequence with 409', async () => {
    const broken = { ...message('telling.started', 'c-x'), som_version: 2, extra: true };
    const invalid = await refusal(publishMessage(deps, publisher, bytes(broken), 'publish'));
    expect(invalid.status).toBe(400);
    expect(invalid.rules).toEqual(expect.arrayContaining(['schema.type', 'schema.additional_property']));

    const audit = { ...(som.examples['system.audit'] as Record<string, unknown>), message_id: randomUUID() };
    expect(await refusal(publishMessage(deps, publisher, bytes(audit), 'publish'))).toMatchObject({ status: 403 });

    const exposedFirst = message('telling.exposed', `c-${randomUUID()}`);
    expect(await refusal(publishMessage(deps, publisher, bytes(exposedFirst), 'publish'))).toEqual({
      status: 409,
      rules: ['sequence.telling.not_started'],
    });
    expect(await refusal(publishMessage(deps, publisher, Buffer.from('{"not json'), 'publish'))).toEqual({
      status: 400,
      rules: ['schema.json_invalid'],
    });
  });

  it('validates with dry_run and writes nothing to Postgres or Kafka', async () => {
    const started = message('telling.started', `c-${randomUUID()}`);
    expect(await publishMessage(deps, publisher, bytes(started), 'validate')).toEqual({
      status: 202,
      body: { accepted: true, message_id: started.message_id, message_type: 'telling.started', family: 'telling', dry_run: true },
    });
    expect(await db('accepted_messages').where({ message_id: started.message_id }).first()).toBeUndefined();
    expect(await db('story_state').where({ correlation_id: started.correlation_id }).first()).toBeUndefined();
    expect(await topicSize()).toBe(produced.length);
  }, 30_000);

  it('answers a validate racing the publish of the same message as a lone validate would: dry run or duplicate, never out of sequence', async () => {
    const answers = new Map<string, number>();
    for (let race = 0; race < 60; race++) {
      const started = message('telling.started', `c-${randomUUID()}`);
      const published = publishMessage(deps, publisher, bytes(started), 'publish');
      // Validates spread over the publish's commit (a few milliseconds): before it, during it and after
      // it. A pacing of when each starts, not a wait for anything: the assertions need no timing.
      const validates = Array.from({ length: 6 }, (_, i) =>
        // eslint-disable-next-line no-restricted-syntax
        new Promise<void>((resolve) => setTimeout(resolve, i)).then(() =>
          publishMessage(deps, publisher, bytes(started), 'validate').then(
            (answer) => String(answer.status),
            (err: unknown) => `${(err as { status?: number }).status} ${(err as { rule?: string }).rule}`,
          ),
        ),
      );
      expect((await published).status).toBe(202);
      produced.push(started.message_id);
      for (const answer of await Promise.all(validates)) answers.set(answer, (answers.get(answer) ?? 0) + 1);
    }
    expect([...answers.keys()].filter((answer) => answer !== '202' && answer !== '200')).toEqual([]);
  }, 60_000);

  it('answers 503 publish.unavailable when Kafka fails, keeps nothing, and accepts the retry once', async () => {
    const started = message('telling.started', `c-${randomUUID()}`);
    // Kafka's outage, injected at the boundary: the send fails after the transaction began.
    const failing: CommitToKafka = async () => {
      throw new Error('broker unreachable');
    };
    const failed = publishMessage(publishDeps({ commitToKafka: failing }), publisher, bytes(started), 'publish');
    expect(await refusal(failed)).toEqual({ status: 503, rules: ['publish.unavailable'] });
    // The 503 carries Kafka's own error as its cause, for the log line the error middleware writes.
    expect(((await failed.catch((e: unknown) => e)) as Error).cause).toEqual(new Error('broker unreachable'));
    expect(await db('accepted_messages').where({ message_id: started.message_id }).first()).toBeUndefined();
    expect(await db('story_state').where({ correlation_id: started.correlation_id }).first()).toBeUndefined();

    expect((await publishMessage(deps, publisher, bytes(started), 'publish')).status).toBe(202);
    expect((await publishMessage(deps, publisher, bytes(started), 'publish')).status).toBe(200);
    produced.push(started.message_id);
    expect(await topicSize()).toBe(produced.length);
  }, 30_000);

  it('gives up a commit whose Kafka send does not answer within the commit timeout: 503, nothing kept, the lock free, a late ack logged', async () => {
    const started = message('telling.started', `c-${randomUUID()}`);
    let land: (acks: Array<{ partition: number; offset: string }>) => void = () => undefined;
    const hanging: CommitToKafka = () => new Promise((resolve) => (land = resolve));
    const lines: string[] = [];
    const captured = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const commitTimeoutMs = 300;
    const startedAt = Date.now();
    const failed = await publishMessage(publishDeps({ commitToKafka: hanging, commitTimeoutMs, logger: captured }), publisher, bytes(started), 'publish').catch(
      (e: unknown) => e,
    );
    const tookMs = Date.now() - startedAt;
    expect(failed).toMatchObject({ status: 503, rule: 'publish.unavailable', headers: { 'Retry-After': '1' } });
    expect((failed as Error).cause).toEqual(new CommitTimeoutError(commitTimeoutMs, 'the Kafka acknowledgement'));
    expect(tookMs).toBeGreaterThanOrEqual(commitTimeoutMs - 5);
    expect(tookMs).toBeLessThan(commitTimeoutMs + 1_000);
    expect(await db('accepted_messages').where({ message_id: started.message_id }).first()).toBeUndefined();
    expect(await db('story_state').where({ correlation_id: started.correlation_id }).first()).toBeUndefined();

    // The transaction rolled back and let go of the story lock: the retry is accepted at once.
    expect((await publishMessage(deps, publisher, bytes(started), 'publish')).status).toBe(202);
    produced.push(started.message_id);
    // The abandoned send lands after all: delivery will quarantine that record, and the log says why.
    land([{ partition: 1, offset: '4242' }]);
    const late = await eventually(
      () => lines,
      (l) => l.length > 0,
      { what: 'the late acknowledgement logged' },
    );
    expect(JSON.parse(late[0]!)).toMatchObject({
      level: 40,
      message_ids: [started.message_id],
      records: 1,
      msg: 'Kafka acknowledged records after their publish had timed out; delivery will quarantine them (acceptance.missing)',
    });
    expect(await topicSize()).toBe(produced.length);
  }, 30_000);

  it('gives up a commit that waits for the story lock past the commit timeout and sends nothing', async () => {
    const correlation = `c-${randomUUID()}`;
    const started = message('telling.started', correlation);
    let sends = 0;
    const counting: CommitToKafka = async (records) => {
      sends++;
      return sendToKafka(records);
    };
    // Another transaction holds the correlation id's lock (a publish stuck on a slow Kafka, say). The
    // publish starts only once that lock is held, and the holder always lets go, even when an
    // expectation fails: a transaction left open would keep the pool's destroy() waiting for ever.
    let release: () => void = () => undefined;
    let locked: () => void = () => undefined;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const holding = KnexPublishStore.create(db).withStoryLocks({ stories: [{ workspaceId, correlationId: correlation }], lockTimeoutMs: 30_000 }, () => {
      locked();
      return new Promise<void>((resolve) => (release = resolve));
    });
    try {
      await lockHeld;
      const startedAt = Date.now();
      const failed = await publishMessage(publishDeps({ commitToKafka: counting, commitTimeoutMs: 300 }), publisher, bytes(started), 'publish').catch(
        (e: unknown) => e,
      );
      expect(Date.now() - startedAt).toBeLessThan(1_300);
      expect(failed).toMatchObject({ status: 503, rule: 'publish.unavailable' });
      // The deadline or Postgres' own lock_timeout (set to the same budget), whichever fires first.
      expect(String((failed as Error).cause)).toMatch(/the story locks|lock timeout/);
    } finally {
      release();
      await holding;
    }
    // The waiting transaction got the lock after its answer went out: it must neither send nor commit.
    const advisoryLocks = async () =>
      Number(
        (
          (await db.raw(
            `select count(*) as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
          )) as { rows: Array<{ n: string }> }
        ).rows[0]!.n,
      );
    await eventually(advisoryLocks, (n) => n === 0, { what: 'no advisory lock held in this database any more' });
    expect(sends).toBe(0);
    expect(await db('accepted_messages').where({ message_id: started.message_id }).first()).toBeUndefined();
  }, 30_000);

  it('keeps Kafka order equal to acceptance order when one correlation id races', async () => {
    const correlations = Array.from({ length: 5 }, () => `race-${randomUUID()}`);
    const accepted: string[] = [];
    await Promise.all(
      correlations.flatMap((correlation) => {
        // A start, exposures and an end all at once: whatever wins the lock, Kafka must hold a valid story.
        const batch = [
          message('telling.started', correlation),
          ...Array.from({ length: 4 }, () => message('telling.exposed', correlation)),
          message('telling.ended', correlation, {}),
        ];
        return batch.map(async (m) => {
          const answer = await publishMessage(deps, publisher, bytes(m), 'publish').catch(() => null);
          if (answer?.status === 202) accepted.push(m.message_id);
        });
      }),
    );
    produced.push(...accepted);
    expect(await topicSize()).toBe(produced.length);
    const records = await readTopic(produced.length);
    for (const correlation of correlations) {
      const types = records.filter((r) => r.key === `${workspaceId}/${correlation}`).map((r) => r.headers.message_type);
      // Valid per the telling machine: started first, exposures, at most one ended and nothing after it.
      expect(types[0]).toBe('telling.started');
      expect(types.slice(1).every((t) => t === 'telling.exposed' || t === 'telling.ended')).toBe(true);
      expect(types.indexOf('telling.ended') === -1 || types.indexOf('telling.ended') === types.length - 1).toBe(true);
    }
    expect(records.map((r) => r.headers.message_id).sort()).toEqual([...produced].sort());
  }, 60_000);

  it('answers every member of a group commit exactly as each publish alone, in arrival order', async () => {
    const c1 = `c-${randomUUID()}`;
    const c2 = `c-${randomUUID()}`;
    const c3 = `c-${randomUUID()}`;
    const first = message('telling.started', c1);
    const earlier = message('telling.started', c3);
    const exposed = message('telling.exposed', c1);
    const table: Array<[string, unknown]> = [
      ['a resend of a message accepted before the batch', earlier],
      ['a first start', first],
      ['an exposure right behind its start, in the same batch', exposed],
      ['a resend of the start, in the same batch', first],
      ["the start's message_id with other content", { ...first, occurred_at: '2020-01-01T00:00:00Z' }],
      ['an exposure of a story never started', message('telling.exposed', c2)],
      ['a type the app may not publish', { ...(som.examples['system.audit'] as Record<string, unknown>), message_id: randomUUID() }],
      ['the end of the story', message('telling.ended', c1)],
      ['an exposure after the end', message('telling.exposed', c1)],
      ['a start of the never-started story', message('telling.started', c2)],
      ['its exposure, two members later', message('telling.exposed', c2)],
    ];
    const answerOf = (run: Promise<unknown>) =>
      run.then(
        (answer) => answer,
        (err: { status: number; violations?: () => Array<{ rule: string }>; rule?: string }) => ({
          status: err.status,
          rules: err.violations?.().map((v) => v.rule) ?? [err.rule],
        }),
      );

    // Alone: one publish at a time in the first workspace.
    expect((await publishMessage(deps, publisher, bytes(earlier), 'publish')).status).toBe(202);
    const alone: unknown[] = [];
    for (const [, m] of table) alone.push(await answerOf(publishMessage(deps, publisher, bytes(m), 'publish')));

    // Together: the same messages in the second workspace, all arriving while one publish commits.
    const metrics = new Registry();
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const store = KnexPublishStore.create(db);
    // The policy of the first workspace's app, read once (as the gateway's cache holds it): the two
    // runs differ only in how they commit, and every publish reaches the committer in the order sent.
    const allowed = await store.permissions(publisher.appId);
    const gated: PublishDeps = {
      ...deps,
      permissions: async () => allowed,
      committer: createGroupCommitter({
        store,
        commitToKafka: async (records) => {
          await gate;
          return sendToKafka(records);
        },
        commitTimeoutMs: 5_000,
        logger,
        metrics,
      }),
    };
    const before = publishMessage(gated, batchPublisher, bytes(earlier), 'publish');
    const together = table.map(([, m]) => answerOf(publishMessage(gated, batchPublisher, bytes(m), 'publish')));
    openGate();
    expect(((await before) as { status: number }).status).toBe(202);
    const batched = await Promise.all(together);

    // One batch for the table: every member went through the same transaction and produce request.
    expect(await metrics.getSingleMetricAsString('bus_publish_batch_size')).toMatch(/^bus_publish_batch_size_count 2$/m);
    expect(await metrics.getSingleMetricAsString('bus_publish_batch_size')).toMatch(/^bus_publish_batch_size_sum 12$/m);
    expect(table.map(([what], i) => [what, batched[i]])).toEqual(table.map(([what], i) => [what, alone[i]]));
    // And the answers are the expected ones (not merely equal): accepted, duplicate, reused, refused.
    expect(alone.map((a) => (a as { status: number }).status)).toEqual([200, 202, 202, 200, 409, 409, 403, 202, 409, 202, 202]);
    const acceptedIds = table.filter((_, i) => (alone[i] as { status: number }).status === 202).map(([, m]) => (m as { message_id: string }).message_id);
    produced.push(earlier.message_id, ...acceptedIds, earlier.message_id, ...acceptedIds);
    expect(await topicSize()).toBe(produced.length);
  }, 60_000);

  it('reads under the locks exactly what it recorded, for ids that need quoting in its one-round-trip SQL', async () => {
    // The store quotes ids into its lock-and-read query; the schema never lets a quote or backslash
    // through, but the store must not depend on it.
    const correlationId = `it's\\ "${randomUUID()}"`;
    const messageId = `m'${randomUUID()}\\`;
    const store = KnexPublishStore.create(db);
    const scope = { stories: [{ workspaceId, correlationId }], messages: [{ workspaceId, messageId }], lockTimeoutMs: 5_000 };
    const state = { ...EMPTY_STORY_STATE };
    const before = await store.withStoryLocks(scope, (tx) => {
      tx.record(
        [
          {
            workspaceId,
            messageId,
            contentHash: 'a'.repeat(64),
            bodySha256: Buffer.alloc(32, 0xb5),
            messageType: 'telling.started',
            correlationId,
            producerConnectionId: publisher.clientId,
            acceptedAt: new Date(),
            kafkaPartition: 2,
            kafkaOffset: '9007199254740993',
          },
        ],
        [{ workspaceId, correlationId, state, updatedAt: new Date() }],
      );
      return { accepted: [...tx.accepted], states: [...tx.storyStates] };
    });
    expect(before).toEqual({ accepted: [], states: [] });
    const after = await store.withStoryLocks(scope, async (tx) => ({ accepted: [...tx.accepted], states: [...tx.storyStates] }));
    expect(after).toEqual({ accepted: [[`${workspaceId}/${messageId}`, 'a'.repeat(64)]], states: [[`${workspaceId}/${correlationId}`, state]] });
    expect(
      await db('accepted_messages').where({ workspace_id: workspaceId, message_id: messageId }).first('kafka_offset', 'kafka_partition', 'body_sha256'),
    ).toEqual({
      kafka_offset: '9007199254740993',
      kafka_partition: 2,
      body_sha256: Buffer.alloc(32, 0xb5),
    });
  });

  it('reads exactly the (workspace, id) pairs of its batch: an id recorded in one workspace is not read for another', async () => {
    const [one, two] = [workspaceId, batchPublisher.workspaceId];
    const correlationId = `c-${randomUUID()}`;
    const messageId = randomUUID();
    const store = KnexPublishStore.create(db);
    const state = { ...EMPTY_STORY_STATE };
    await store.withStoryLocks({ stories: [{ workspaceId: one, correlationId }], messages: [{ workspaceId: one, messageId }], lockTimeoutMs: 5_000 }, (tx) =>
      tx.record(
        [
          {
            workspaceId: one,
            messageId,
            contentHash: 'c'.repeat(64),
            bodySha256: Buffer.alloc(32, 1),
            messageType: 'telling.started',
            correlationId,
            producerConnectionId: publisher.clientId,
            acceptedAt: new Date(),
            kafkaPartition: 0,
            kafkaOffset: '1',
          },
        ],
        [{ workspaceId: one, correlationId, state, updatedAt: new Date() }],
      ),
    );
    const read = (scope: { stories: Array<{ workspaceId: string; correlationId: string }>; messages: Array<{ workspaceId: string; messageId: string }> }) =>
      store.withStoryLocks({ ...scope, lockTimeoutMs: 5_000 }, async (tx) => ({ accepted: [...tx.accepted], states: [...tx.storyStates] }));
    const both = await read({
      stories: [
        { workspaceId: two, correlationId },
        { workspaceId: one, correlationId },
      ],
      messages: [
        { workspaceId: two, messageId },
        { workspaceId: one, messageId },
      ],
    });
    expect(both).toEqual({ accepted: [[`${one}/${messageId}`, 'c'.repeat(64)]], states: [[`${one}/${correlationId}`, state]] });
    // Each id asked for in the workspace where it was not recorded (a read of workspaces × ids would find both).
    const crossed = await read({
      stories: [
        { workspaceId: two, correlationId },
        { workspaceId: one, correlationId: `c-${randomUUID()}` },
      ],
      messages: [
        { workspaceId: two, messageId },
        { workspaceId: one, messageId: randomUUID() },
      ],
    });
    expect(crossed).toEqual({ accepted: [], states: [] });
    expect(await read({ stories: [{ workspaceId: two, correlationId }], messages: [] })).toEqual({ accepted: [], states: [] });
  });
});
