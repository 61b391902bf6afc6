import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { BusProducer, BusTestRuns, junitXml, type RunReport, type TestRun } from '@bus/client';
import { som } from '@bus/schemas';
import { eventually, REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { runCommand, type Ran } from './support/command';
import { junitSchemaErrors } from './support/junit-schema';
import { houseAndOther, type TenantFixture, type Tenant } from './support/tenants';

/**
 * Test runs on the compiled all-in-one bus (docs/testing-tools.md#test-runs): a run opened by a
 * producer and stopped by a consumer of the workspace; its report lists the window's accepted and
 * refused publishes and refused validates, counts refusals per rule, shows a consumer's receive and
 * ack; the JUnit and CTRF forms parse and validate against their schemas; busctl run drives the same routes; anyone outside
 * the workspace is refused.
 */
const SYSTEM_ID = 'storyteller.web';
const ALL_TYPES = Object.keys(som.examples);
const BUSCTL = path.join(REPO_ROOT, 'cli/busctl/dist/main.js');

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
const tokens = { producer: '', consumer: '', otherProducer: '' };

beforeAll(async () => {
  bus = await startBus();
  ({ tenants, house, other } = await houseAndOther(bus, { systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES }));
  tokens.producer = await tenants.token(house.producer);
  tokens.consumer = await tenants.token(house.consumer);
  tokens.otherProducer = await tenants.token(other.producer);
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

function message(): Record<string, unknown> & { message_id: string } {
  return {
    ...(som.examples['telling.started'] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: `c-${randomUUID()}`,
    occurred_at: new Date().toISOString(),
  };
}
const withoutOccurredAt = () => {
  const { occurred_at: _dropped, ...rest } = message();
  return rest as Record<string, unknown> & { message_id: string };
};

const runsPath = (route = '', t = house.workspaceId) => `/v1/tenants/${t}/runs${route}`;
const reportOf = async (runId: string, bearer = tokens.producer) => {
  const res = await bearerCall(bus, 'GET', runsPath(`/${runId}/report`), bearer);
  expect(res.status).toBe(200);
  return res.body as RunReport;
};

describe('a test run and its report', () => {
  it('lists every publish and refused validate of its window, counts refusals per rule, and shows a consumer receive and ack', async () => {
    const opened = await bearerCall(bus, 'POST', runsPath(), tokens.producer, { label: 'ci #1' });
    expect(opened.status).toBe(201);
    const run = opened.body as TestRun;
    expect(run).toMatchObject({ label: 'ci #1', workspace_id: house.workspaceId, opened_by: house.producer.clientId, state: 'open', stopped_at: null });

    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    const accepted = [message(), message()];
    for (const m of accepted) expect((await producer.publish(m)).status).toBe(202);
    const noTime = withoutOccurredAt();
    await expect(producer.publish(noTime)).rejects.toMatchObject({ status: 400 });
    await expect(producer.validate(withoutOccurredAt())).rejects.toMatchObject({ status: 400 });
    await expect(producer.publish({ ...message(), system_id: 'not.allowed' })).rejects.toMatchObject({ status: 403 });

    // The consumer receives the two accepted messages and acks one.
    const consumerPath = (route: string) => `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/${route}`;
    const received = await eventually(
      async () =>
        (await bearerCall(bus, 'GET', `${consumerPath('messages')}?wait_seconds=5&max_messages=10`, tokens.consumer)).body as {
          messages: Array<{ message_id: string; receipt_handle: string }>;
        },
      (b) => b.messages.length > 0,
      { timeoutMs: 30_000, what: 'the accepted messages delivered' },
    );
    const acked = received.messages[0] as { message_id: string; receipt_handle: string };
    expect((await bearerCall(bus, 'POST', consumerPath('ack'), tokens.consumer, { receipt_handles: [acked.receipt_handle] })).status).toBe(200);

    // Refusals reach their table about a second after their answers.
    const report = await eventually(
      () => reportOf(run.id),
      (r) => r.totals.refused === 3,
      { timeoutMs: 20_000, what: 'the three refusals recorded' },
    );
    // The consumer, not the opener, stops it: any connection of the workspace may.
    const stopped = await bearerCall(bus, 'POST', runsPath(`/${run.id}/stop`), tokens.consumer);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ id: run.id, state: 'ended', stopped_at: expect.any(String) });

    expect(report.truncated).toBe(false);
    expect(report.totals).toEqual({ accepted: 2, refused: 3 });
    expect(report.messages.map((m) => [m.mode, m.outcome])).toEqual([
      ['publish', 'accepted'],
      ['publish', 'accepted'],
      ['publish', 'refused'],
      ['validate', 'refused'],
      ['publish', 'refused'],
    ]);
    expect(report.messages.slice(0, 2).map((m) => m.message_id)).toEqual(accepted.map((m) => m.message_id));
    expect(report.messages[2]).toMatchObject({ message_id: noTime.message_id, status: 400, connection_id: house.producer.clientId });
    const schemaRule = report.messages[2]?.violations[0]?.rule as string;
    const policyRule = report.messages[4]?.violations[0]?.rule as string;
    expect(report.by_rule).toEqual([
      { rule: schemaRule, refusals: 2 },
      { rule: policyRule, refusals: 1 },
    ]);
    expect(report.by_message_type).toEqual([{ message_type: 'telling.started', accepted: 2, refused: 3 }]);

    const consumerSide = await eventually(
      () => reportOf(run.id),
      (r) => r.consumers[0]?.enqueued === 2,
      { timeoutMs: 20_000, what: 'both copies counted' },
    );
    const consumer = consumerSide.consumers[0];
    expect(consumer).toMatchObject({ consumer_id: house.consumer.clientId, received: received.messages.length, acked: 1 });
    expect(consumer?.publish_to_receive?.max_ms).toBeGreaterThanOrEqual(0);
    expect(consumer?.receive_to_ack?.max_ms).toBeGreaterThanOrEqual(0);
    // A message published after the stop is not the run's.
    await producer.publish(message());
    expect((await reportOf(run.id)).totals).toEqual({ accepted: 2, refused: 3 });
  }, 120_000);

  it('lists the validates accepted while it is open, and none from before or after it', async () => {
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    await producer.validate(message());
    const runs = new BusTestRuns({ baseUrl: bus.busUrl, ...house.producer });
    const run = await runs.start('validates');
    const inside = message();
    await producer.validate(inside);
    const firstListed = (runId: string) =>
      eventually(
        () => runs.report(runId),
        (r) => r.messages.length > 0,
        { timeoutMs: 20_000, what: 'a validate recorded' },
      );
    const listed = await firstListed(run.id);
    await runs.stop(run.id);
    await producer.validate(message());

    // A later run's own validate is written after the one before it would have been.
    const later = await runs.start('validates, later');
    const next = message();
    await producer.validate(next);
    const laterReport = await firstListed(later.id);
    await runs.stop(later.id);

    expect(listed.messages).toEqual([
      expect.objectContaining({
        mode: 'validate',
        outcome: 'accepted',
        status: 202,
        message_id: inside.message_id,
        correlation_id: inside.correlation_id,
        violations: [],
      }),
    ]);
    expect(listed.totals).toEqual({ accepted: 1, refused: 0 });
    expect((await runs.report(run.id)).messages.map((m) => m.message_id)).toEqual([inside.message_id]);
    expect(laterReport.messages.map((m) => m.message_id)).toEqual([next.message_id]);
    // A validate is delivered to no one, so the consumers' side counts none.
    expect(listed.consumers.every((c) => c.enqueued === 0)).toBe(true);
  }, 60_000);

  it('serves the report as JUnit XML and CTRF JSON: a test case per message, a failure carrying its violations', async () => {
    const runs = new BusTestRuns({ baseUrl: bus.busUrl, ...house.consumer });
    const run = await runs.start('formats');
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    const ok = message();
    await producer.publish(ok);
    await expect(producer.publish(withoutOccurredAt())).rejects.toMatchObject({ status: 400 });
    await eventually(
      () => runs.report(run.id),
      (r) => r.totals.refused === 1,
      { timeoutMs: 20_000, what: 'the refusal recorded' },
    );
    await runs.stop(run.id);

    const junit = await bearerCall(bus, 'GET', `${runsPath(`/${run.id}/report`)}?format=junit`, tokens.consumer);
    expect(junit.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(await junitSchemaErrors(junit.body as string)).toEqual([]);
    const parsed = (await parseJunit(junit.body as string)) as {
      tests: number;
      failures: number;
      testsuite: Array<{ name: string; testcase: Array<{ name: string; failure?: Array<{ message: string; inner: string }> }> }>;
    };
    expect(parsed).toMatchObject({ tests: 2, failures: 1 });
    const cases = parsed.testsuite.flatMap((s) => s.testcase);
    expect(cases[0]?.name).toContain(`publish ${ok.message_id}`);
    expect(cases[1]?.failure?.[0]?.message).toMatch(/^400 /);
    expect(cases[1]?.failure?.[0]?.inner).toContain('/occurred_at');

    const ctrf = await bearerCall(bus, 'GET', `${runsPath(`/${run.id}/report`)}?format=ctrf`, tokens.consumer);
    // ctrf's validate checks against CTRF's published JSON schema, which the package ships (dist/ctrf-schema-0.0.json).
    expect(validateCtrf(ctrf.body)).toMatchObject({ valid: true, errors: [] });
    expect(ctrf.body).toMatchObject({ results: { summary: { tests: 2, passed: 1, failed: 1 } } });
  }, 60_000);

  it("writes JUnit that Jenkins' schema accepts whatever a violation quotes: markup, quotes, control characters, lone surrogates", async () => {
    const xml = junitXml({
      tool: 'run <"label">',
      startedAt: new Date('2026-11-29T06:00:00.000Z'),
      stoppedAt: new Date('2026-11-29T06:21:40.250Z'),
      cases: [
        { name: 'publish a', suite: 'story.context', durationMs: 1_234_567, outcome: 'passed' },
        {
          name: "b 'quoted'",
          suite: 'story.context',
          durationMs: 8,
          outcome: 'failed',
          message: '400 schema.type',
          details: 'schema.type /x: "<\u0001\uD800>" & ]]>',
        },
        { name: 'c', suite: 'unknown & <odd>', durationMs: 0, outcome: 'error', message: 'the bus could not be reached\u0000' },
      ],
    });
    expect(await junitSchemaErrors(xml)).toEqual([]);
    expect(await parseJunit(xml)).toMatchObject({ tests: 3, failures: 1, errors: 1 });
  });

  it('refuses a caller outside the workspace, an unknown run and a bad body', async () => {
    const run = (await bearerCall(bus, 'POST', runsPath(), tokens.producer, { label: 'mine', duration_seconds: 60 })).body as TestRun;
    expect(Date.parse(run.ends_at) - Date.parse(run.started_at)).toBe(60_000);
    const rule = (res: { body: unknown }) => (res.body as { violations: Array<{ rule: string }> }).violations[0]?.rule;

    const foreign = await bearerCall(bus, 'GET', runsPath(`/${run.id}`), tokens.otherProducer);
    expect([foreign.status, rule(foreign)]).toEqual([403, 'tenant.mismatch']);
    // Another workspace's own path does not find this workspace's run.
    const elsewhere = await bearerCall(bus, 'GET', runsPath(`/${run.id}/report`, other.workspaceId), tokens.otherProducer);
    expect([elsewhere.status, rule(elsewhere)]).toEqual([404, 'run.unknown']);
    const unknown = await bearerCall(bus, 'POST', runsPath(`/${randomUUID()}/stop`), tokens.consumer);
    expect([unknown.status, rule(unknown)]).toEqual([404, 'run.unknown']);
    const none = await bearerCall(bus, 'GET', runsPath(`/${run.id}`), '');
    expect(none.status).toBe(401);
    // A label is one line of text: Postgres cannot store a NUL, and a control character has no place in a report.
    const labels = ['', '   ', 'nul\u0000inside', 'two\nlines', 'c1\u0085control'];
    for (const body of [{}, ...labels.map((label) => ({ label })), { label: 'x', duration_seconds: 86_401 }, { label: 'x', extra: 1 }]) {
      const bad = await bearerCall(bus, 'POST', runsPath(), tokens.producer, body);
      expect([bad.status, rule(bad)]).toEqual([400, 'request.invalid']);
    }
    const badFormat = await bearerCall(bus, 'GET', `${runsPath(`/${run.id}/report`)}?format=html`, tokens.producer);
    expect([badFormat.status, rule(badFormat)]).toEqual([400, 'request.invalid']);
    const badId = await bearerCall(bus, 'GET', runsPath('/not-a-uuid'), tokens.producer);
    expect([badId.status, rule(badId)]).toEqual([400, 'request.invalid']);
  }, 60_000);
});

function busctl(args: string[]): Promise<Ran> {
  const env = {
    PATH: process.env.PATH ?? '',
    BUS_BASE_URL: bus.busUrl,
    BUS_PRODUCER_CLIENT_ID: house.producer.clientId,
    BUS_PRODUCER_CLIENT_SECRET: house.producer.clientSecret,
  };
  return runCommand(process.execPath, [BUSCTL, ...args], { env, cwd: REPO_ROOT, timeout: 30_000 });
}

describe('busctl run', () => {
  it('starts, stops and reports a run, writing JUnit, CTRF and JSON files; exit 1 when the report lists a refusal', async () => {
    const started = await busctl(['run', 'start', '--label', 'busctl run', '--duration', '1h']);
    expect({ code: started.code, stderr: started.stderr }).toEqual({ code: 0, stderr: '' });
    const runId = /^id +([0-9a-f-]{36})$/m.exec(started.stdout)?.[1] as string;
    expect(started.stdout).toMatch(/^state +open$/m);

    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    await producer.publish(message());
    const dir = mkdtempSync(path.join(tmpdir(), 'busctl-run-'));
    const files = { junit: path.join(dir, 'run.xml'), ctrf: path.join(dir, 'run-ctrf.json'), json: path.join(dir, 'run.json') };
    const clean = await busctl(['run', 'report', runId, '--junit', files.junit, '--ctrf', files.ctrf, '--json', files.json]);
    expect({ code: clean.code, stderr: clean.stderr }).toEqual({ code: 0, stderr: '' });
    expect(clean.stdout).toContain('1 accepted, 0 refused');
    // Nothing received yet: the consumer's row has no spans (whether delivery has enqueued the copy yet or not).
    expect(clean.stdout).toMatch(new RegExp(`^${house.consumer.clientId} +[01] +0 +0 +- +-$`, 'm'));

    await expect(producer.publish(withoutOccurredAt())).rejects.toMatchObject({ status: 400 });
    const stopped = await busctl(['run', 'stop', runId]);
    expect(stopped.stdout).toMatch(/^state +ended$/m);
    const refused = await eventually(
      () => busctl(['run', 'report', runId, '--junit', files.junit, '--ctrf', files.ctrf, '--json', files.json]),
      (ran) => ran.code === 1,
      { timeoutMs: 20_000, what: 'the refusal in the report' },
    );
    expect(refused.stdout).toContain('1 accepted, 1 refused');
    expect((JSON.parse(readFileSync(files.json, 'utf8')) as RunReport).run).toMatchObject({ id: runId, state: 'ended' });
    expect(await parseJunit(readFileSync(files.junit, 'utf8'))).toMatchObject({ tests: 2, failures: 1 });
    expect(await junitSchemaErrors(readFileSync(files.junit, 'utf8'))).toEqual([]);
    expect(validateCtrf(JSON.parse(readFileSync(files.ctrf, 'utf8')))).toMatchObject({ valid: true });

    const usage = await busctl(['run', 'start']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--label is required');
  }, 90_000);
});
