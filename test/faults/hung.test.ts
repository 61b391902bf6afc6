import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, REPO_ROOT, type ObservedResponse } from '@bus/testing';
import { startBus, type RunningBus } from '../support/bus';
import { startOwnStack, type OwnStack } from '../support/stack';
import { TenantFixture, type Tenant } from '../support/tenants';

/**
 * Hung servers (the fault tier): Kafka, then Postgres, stop answering without going away — SIGSTOP,
 * then SIGCONT after HANG_MS, so connections stay open and nothing is refused — while a producer
 * publishes about 20 times a second with fresh message_ids. What a client must be able to count on:
 * every publish is answered within PUBLISH_COMMIT_TIMEOUT and its slack, counted from when it was
 * sent (docs/gateway.md, "Failures"), with 202, 200 or a documented 503; each 503 retried with its
 * message_id after the resume ends in 202 or 200 duplicate; an ack sent while Postgres hangs answers
 * 503 queue.unavailable within its bound, and the same ack sent again after the resume answers as
 * docs/delivery.md says. A bus and servers of the test's own (deploy/local/stack.sh as a second stack).
 */
const PUBLISH_EVERY_MS = 50;
const HANG_MS = 8_000;
/** The stream runs this long before and after each hang. */
const STEADY_MS = 2_000;
/** The gateway's default PUBLISH_COMMIT_TIMEOUT and the slack docs/gateway.md allows on top of it. */
const PUBLISH_ANSWER_MS = 5_000 + 1_000;
/** The pull API's ack and nack bound (services/pull-api SETTLE_TIMEOUT_MS) and the same slack. */
const ACK_ANSWER_MS = 5_000 + 1_000;
/** Well past any bound: a request still unanswered then counts as never answered. */
const REQUEST_TIMEOUT_MS = 20_000;
/** The identity caches' longest TTL: a tenant used within it never reads its connection, quota or permissions from Postgres again. */
const IDENTITY_CACHE_TTL = '30s';
const SYSTEM_ID = 'storyteller.web';
/** The 503s a publish may answer (docs/gateway.md, "Failures"). */
const PUBLISH_503_RULES = ['publish.unavailable', 'registry.unavailable'];

const busApi = createOpenApiChecker(openapi.bus);

let stack: OwnStack | undefined;
let bus: RunningBus | undefined;
let tenants: TenantFixture | undefined;
/** Every process this file stopped and has not continued yet. */
const stopped = new Set<number>();
const nonConforming: string[] = [];

/** Continues every stopped process; safe to call again (and from the exit handler, synchronously). */
function resumeAll(): void {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Gone already: nothing left to continue.
    }
    stopped.delete(pid);
  }
}
process.on('exit', resumeAll);

beforeAll(async () => {
  stack = await startOwnStack('hung');
  bus = await startBus(
    {
      BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000',
      BUS_LIMIT_API_PER_SECOND: '100000',
      BUS_LIMIT_API_BURST: '200000',
      IDENTITY_CACHE_TTL,
    },
    stack.urls,
  );
  tenants = await TenantFixture.create(bus);
}, 150_000);

afterAll(async () => {
  // Never leave a server stopped: stack.sh down would wait for it for ever.
  resumeAll();
  await tenants?.close().catch(() => undefined);
  await bus?.stop().catch(() => undefined);
  await stack?.destroy();
}, 60_000);

// Pacing, not waiting for a condition: the publish rate and how long a server hangs are the workload.
// eslint-disable-next-line no-restricted-syntax
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const firstRule = (res: ObservedResponse) => (res.body as { violations?: Array<{ rule: string }> } | undefined)?.violations?.[0]?.rule;

/** The state directory startOwnStack gave this file's stack (BUS_LOCAL_DIR: .local/hung-<pid>-<time>). */
function stackDir(): string {
  const local = path.join(REPO_ROOT, '.local');
  const port = new URL(stack!.urls.DATABASE_URL).port;
  const dirs = readdirSync(local)
    .filter((name) => name.startsWith(`hung-${process.pid}-`))
    .map((name) => path.join(local, name))
    .filter((dir) => existsSync(path.join(dir, 'postgres/data/postmaster.pid')));
  // postmaster.pid's fourth line is the port: the stack whose Postgres serves this file's bus.
  const ours = dirs.filter((dir) => readFileSync(path.join(dir, 'postgres/data/postmaster.pid'), 'utf8').split('\n')[3]?.trim() === port);
  if (ours.length !== 1) throw new Error(`expected one stack directory of this file with Postgres on port ${port}, found ${JSON.stringify(dirs)}`);
  return ours[0]!;
}

function pidFrom(file: string): number {
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]?.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${file}`);
  return pid;
}

/** The Kafka broker's JVM (stack.sh writes its pid). */
const kafkaProcesses = (): number[] => [pidFrom(path.join(stackDir(), 'kafka/kafka.pid'))];

/** The postmaster and all its children (backends, WAL writer, checkpointer…): stopping the postmaster alone leaves the backends serving. */
function postgresProcesses(): number[] {
  const postmaster = pidFrom(path.join(stackDir(), 'postgres/data/postmaster.pid'));
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its ')'.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

/**
 * Stops `pids` (the first one first: a postmaster forks no new backend once stopped), runs `during`,
 * and continues them HANG_MS after the stop — always, even when `during` fails.
 */
async function hang(pids: () => number[], during: () => Promise<void> = async () => undefined): Promise<void> {
  const stoppedAt = Date.now();
  try {
    const stop = (pid: number) => {
      process.kill(pid, 'SIGSTOP');
      stopped.add(pid);
    };
    stop(pids()[0]!);
    for (const pid of pids()) if (!stopped.has(pid)) stop(pid);
    await during();
    await pause(HANG_MS - (Date.now() - stoppedAt));
  } finally {
    resumeAll();
  }
}

/** A fresh tenant whose producer may publish far more than 20 a second, with a producer and a consumer token. */
async function freshTenant(): Promise<{ tenant: Tenant; producerToken: string; consumerToken: string }> {
  const tenant = await tenants!.tenant({ systemIds: [SYSTEM_ID], messageTypes: ['telling.started'] });
  await tenants!
    .db('workspaces')
    .where({ id: tenant.workspaceId })
    .update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
  return { tenant, producerToken: await tenants!.token(tenant.producer), consumerToken: await tenants!.token(tenant.consumer) };
}

/** One call to the bus, timed from just before it was sent, checked against the OpenAPI document. */
async function call(method: 'GET' | 'POST', apiPath: string, bearer: string, body?: unknown) {
  const sentAt = Date.now();
  let res: (ObservedResponse & { headers: Headers }) | null = null;
  try {
    res = await fetchObserved(`${bus!.busUrl}${apiPath}`, {
      method,
      headers: { Authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch {
    // No answer (the connection failed or REQUEST_TIMEOUT_MS passed): status 0.
  }
  const ms = Date.now() - sentAt;
  if (res !== null) {
    try {
      busApi.check(method, apiPath, res);
    } catch (err) {
      nonConforming.push(err instanceof Error ? err.message : String(err));
    }
  }
  return { status: res?.status ?? 0, rule: res === null ? undefined : firstRule(res), body: res?.body, ms };
}

function message(correlationId = `hung-${randomUUID()}`) {
  return {
    ...(som.examples['telling.started'] as Record<string, unknown>),
    message_type: 'telling.started',
    message_id: randomUUID(),
    correlation_id: correlationId,
    occurred_at: new Date().toISOString(),
  };
}

interface Published {
  /** The message as sent. */
  sent: ReturnType<typeof message>;
  status: number;
  rule: string | undefined;
  ms: number;
}

/** Publishes a fresh message every PUBLISH_EVERY_MS while `during` runs; resolves with every answer. */
async function stream(tenant: Tenant, token: string, during: () => Promise<void>): Promise<Published[]> {
  const answers: Array<Promise<Published>> = [];
  let streaming = true;
  const producing = (async () => {
    while (streaming) {
      const body = message();
      answers.push(call('POST', `/v1/tenants/${tenant.workspaceId}/messages`, token, body).then(({ status, rule, ms }) => ({ sent: body, status, rule, ms })));
      await pause(PUBLISH_EVERY_MS);
    }
  })();
  try {
    await during();
  } finally {
    streaming = false;
    await producing;
  }
  return Promise.all(answers);
}

/** Sends each 503'd publish again with its message_id until it is accepted (202) or found accepted (200 duplicate). */
async function retryUnavailable(tenant: Tenant, token: string, answers: Published[]): Promise<number[]> {
  const finals: number[] = [];
  for (const { sent: body } of answers.filter((a) => a.status === 503)) {
    const retried = await eventually(
      () => call('POST', `/v1/tenants/${tenant.workspaceId}/messages`, token, body),
      (a) => a.status !== 503 && a.status !== 0,
      { timeoutMs: 60_000, intervalMs: 500, what: `publish ${body.message_id} answered for good after the resume` },
    );
    finals.push(retried.status);
  }
  return finals;
}

/** What a client may see of a publish while a server hangs: in time, and only documented statuses. */
function expectAnsweredInTime(answers: Published[]): void {
  expect(answers.filter((a) => a.ms > PUBLISH_ANSWER_MS).map((a) => `${a.status} ${a.rule ?? ''} after ${a.ms} ms`)).toEqual([]);
  expect(answers.filter((a) => ![202, 200, 503].includes(a.status)).map((a) => `${a.status} ${a.rule ?? ''}`)).toEqual([]);
  expect(answers.filter((a) => a.status === 503 && !PUBLISH_503_RULES.includes(a.rule ?? '')).map((a) => a.rule)).toEqual([]);
}

/** How many of each, e.g. "202: 136, 503 publish.unavailable: 97". */
function counted(keys: string[]): string {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].map(([key, n]) => `${key}: ${n}`).join(', ');
}

function summary(answers: Published[], finals: number[]): string {
  const slowest = Math.max(...answers.map((a) => a.ms));
  const statuses = counted(answers.map((a) => `${a.status}${a.rule ? ` ${a.rule}` : ''}`));
  return `${answers.length} publishes (${statuses}), slowest answered in ${slowest} ms; the 503s sent again: ${counted(finals.map(String)) || 'none'}`;
}

/**
 * A request with a token of an unknown kid makes the process read the signing key set again (at most
 * every 5 s), which it otherwise does on a request every 60 s: after this, no request of the next
 * minute waits for a key-set read, which with Postgres hung would wait for Postgres' own bounds.
 */
async function refreshKeySet(workspaceId: string): Promise<void> {
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: `unknown-${randomUUID()}` })).toString('base64url');
  const res = await call('POST', `/v1/tenants/${workspaceId}/messages`, `${header}.e30.c2ln`, message());
  expect(res.status).toBe(401);
}

it('answers every publish in time while Kafka hangs, and accepts each 503 when sent again', async () => {
  const { tenant, producerToken } = await freshTenant();
  const answers = await stream(tenant, producerToken, async () => {
    await pause(STEADY_MS);
    await hang(kafkaProcesses);
    await pause(STEADY_MS);
  });
  const finals = await retryUnavailable(tenant, producerToken, answers);
  process.stdout.write(`hung Kafka (${HANG_MS / 1000} s): ${summary(answers, finals)}\n`);
  expectAnsweredInTime(answers);
  // The hang was long enough to time publishes out.
  expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
  expect(finals.filter((status) => status !== 202 && status !== 200)).toEqual([]);
  expect(nonConforming).toEqual([]);
}, 60_000);

it('answers every publish in time while Postgres hangs, an ack 503 queue.unavailable within its bound, and the same ack again as documented', async () => {
  // A tenant used only from now on: its connections, quota and permissions are read into the caches
  // below, and stay there through the hang (IDENTITY_CACHE_TTL).
  const { tenant, producerToken, consumerToken } = await freshTenant();
  const consumerPath = `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.clientId}`;
  const held = message();
  expect((await call('POST', `/v1/tenants/${tenant.workspaceId}/messages`, producerToken, held)).status).toBe(202);
  const received = await eventually(
    () => call('GET', `${consumerPath}/messages?max_messages=1&wait_seconds=1&visibility_timeout=120`, consumerToken),
    (r) => r.status === 200 && (r.body as { messages: unknown[] }).messages.length > 0,
    { timeoutMs: 60_000, what: 'the held message received' },
  );
  const handle = (received.body as { messages: Array<{ receipt_handle: string }> }).messages[0]!.receipt_handle;
  await refreshKeySet(tenant.workspaceId);

  let ackDuringHang: Awaited<ReturnType<typeof call>> | undefined;
  const answers = await stream(tenant, producerToken, async () => {
    await pause(STEADY_MS);
    await hang(postgresProcesses, async () => {
      await pause(1_000);
      ackDuringHang = await call('POST', `${consumerPath}/ack`, consumerToken, { receipt_handles: [handle] });
    });
    await pause(STEADY_MS);
  });
  const finals = await retryUnavailable(tenant, producerToken, answers);
  // After the resume: the same ack again. The one during the hang may or may not have taken effect.
  const again = await eventually(
    () => call('POST', `${consumerPath}/ack`, consumerToken, { receipt_handles: [handle] }),
    (a) => a.status === 200,
    { timeoutMs: 30_000, intervalMs: 500, what: 'the ack sent again answered' },
  );
  const row = await tenants!.db('deliveries').where({ consumer_id: tenant.consumer.clientId, message_id: held.message_id }).first('state');
  process.stdout.write(
    `hung Postgres (${HANG_MS / 1000} s): ${summary(answers, finals)}; ` +
      `ack during the hang: ${ackDuringHang?.status} ${ackDuringHang?.rule ?? ''} after ${ackDuringHang?.ms} ms; ` +
      `sent again: ${JSON.stringify((again.body as { results: unknown[] }).results)}\n`,
  );

  expectAnsweredInTime(answers);
  expect(finals.filter((status) => status !== 202 && status !== 200)).toEqual([]);
  expect(ackDuringHang).toMatchObject({ status: 503, rule: 'queue.unavailable' });
  expect(ackDuringHang!.ms).toBeLessThanOrEqual(ACK_ANSWER_MS);
  // docs/delivery.md: sent again, an ack that took effect meanwhile is receipt_handle.stale, one that did not is done; either way it is acked now.
  expect([[{ receipt_handle: handle, status: 'done' }], [{ receipt_handle: handle, status: 'failed', code: 'receipt_handle.stale' }]]).toContainEqual(
    (again.body as { results: unknown[] }).results,
  );
  expect(row).toEqual({ state: 'acked' });
  expect(nonConforming).toEqual([]);
}, 90_000);
