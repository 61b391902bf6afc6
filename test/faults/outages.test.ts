import { randomUUID } from 'node:crypto';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, type ObservedResponse } from '@bus/testing';
import { startBus, type RunningBus } from '../support/bus';
import { deliveryCaughtUp } from '../support/delivery';
import { startOwnStack, type OwnStack } from '../support/stack';
import { TenantFixture, type Tenant } from '../support/tenants';

/**
 * The fault suite (`npm run test:faults`): a bus on a Postgres, Redis and Kafka of its own
 * (deploy/local/stack.sh as a second stack; the shared servers are never touched) carries a steady
 * publish/receive stream on CORRELATION_IDS correlation ids while the suite kills the bus process
 * (SIGKILL) and restarts it, stops Kafka for KAFKA_DOWN_MS, restarts Postgres and stops Redis. Producers
 * retry a 503 (and a connection the dead bus dropped) with the same message_id, as the spec tells them;
 * some messages are refused on purpose (sequence violations). Then it asserts what a user would check:
 * every accepted message (202, or the 200 duplicate of a retry) is received, first receipts in publish
 * order per correlation id; nothing refused is ever received; a message comes again only as a
 * redelivery (same message_id, higher receive_count), counted; no status outside the documented ones
 * (no 500, every answer checked against the OpenAPI document); a 503 carries Retry-After and its cause
 * is logged; a publish with Kafka down answers within the commit timeout, and a long poll open when
 * Postgres goes away answers 503 queue.unavailable. Each phase prints its seconds and counts.
 */
const CORRELATION_IDS = 50;
/** Each correlation id's producer publishes about this often: ~17 publishes a second in all. */
const PUBLISH_EVERY_MS = 3_000;
/** The stream runs this long before and after every fault. */
const STEADY_MS = 8_000;
const KAFKA_DOWN_MS = 20_000;
const REDIS_DOWN_MS = 10_000;
/** The gateway's default PUBLISH_COMMIT_TIMEOUT, and what a publish answer may take on top of it on a busy machine. */
const COMMIT_TIMEOUT_MS = 5_000;
const ANSWER_SLACK_MS = 1_500;
/** No request may take longer than this (the longest is a receive's 2 s long poll). */
const REQUEST_TIMEOUT_MS = 30_000;
const VISIBILITY_TIMEOUT_S = 5;
const SYSTEM_ID = 'storyteller.web';

const busApi = createOpenApiChecker(openapi.bus);
const adminApi = createOpenApiChecker(openapi.admin);

type What = 'publish' | 'receive' | 'ack' | 'long poll';

/** Every answer seen, by what was asked and status ('network' when the connection failed). */
class Tally {
  readonly counts = new Map<string, number>();
  add(what: What, status: number | 'network'): void {
    const key = `${what} ${status}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  snapshot(): Map<string, number> {
    return new Map(this.counts);
  }
  since(before: Map<string, number>): string {
    return [...this.counts]
      .map(([key, n]) => [key, n - (before.get(key) ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key}: ${n}`)
      .join(', ');
  }
  count(what: What, status: number): number {
    return this.counts.get(`${what} ${status}`) ?? 0;
  }
}

let stack: OwnStack | undefined;
let bus: RunningBus | undefined;
let tenants: TenantFixture | undefined;
let tenant: Tenant;
/** A second tenant whose consumer has nothing queued: its long poll waits until Postgres goes away. */
let idle: Tenant;
let producerToken: string;
let consumerToken: string;
let idleConsumerToken: string;
let idleProducerToken: string;

const tally = new Tally();
const nonConforming: string[] = [];
const unexpected: string[] = [];
const missingRetryAfter: string[] = [];
/** Per correlation id, the message_ids accepted (202 or 200 duplicate), in the order the producer got the answers. */
const accepted = new Map<string, string[]>();
const refused = new Set<string>();
/** Every receipt, in the order the answers were read. */
const receipts: Array<{ messageId: string; correlationId: string; receiveCount: number }> = [];
/** How long each 503 publish.unavailable took to answer. */
const unavailablePublishMs: number[] = [];
let streaming = true;
/** Set when the test ends early (a failed expectation): every client loop returns instead of retrying a stopped bus. */
let aborted = false;

beforeAll(async () => {
  stack = await startOwnStack('faults');
  // The suite's own traffic is far above one source address's spec limits.
  bus = await startBus({ BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000', BUS_LIMIT_API_PER_SECOND: '100000', BUS_LIMIT_API_BURST: '200000' }, stack.urls);
  tenants = await TenantFixture.create(bus);
  const permissions = { systemIds: [SYSTEM_ID], messageTypes: ['telling.started', 'telling.exposed', 'telling.ended'] };
  tenant = await tenants.tenant(permissions);
  idle = await tenants.tenant(permissions);
  await tenants
    .db('workspaces')
    .where({ id: tenant.workspaceId })
    .update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
  producerToken = await tenants.token(tenant.producer);
  consumerToken = await tenants.token(tenant.consumer);
  idleConsumerToken = await tenants.token(idle.consumer);
  idleProducerToken = await tenants.token(idle.producer);
}, 300_000);

afterAll(async () => {
  streaming = false;
  aborted = true;
  await tenants?.close().catch(() => undefined);
  await bus?.stop().catch(() => undefined);
  await stack?.destroy();
}, 120_000);

// Pacing, not waiting for a condition: the stream's publish rate, a client honouring Retry-After,
// and how long a fault lasts (Kafka down 20 s) are the workload itself.
// eslint-disable-next-line no-restricted-syntax
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryAfterMs = (res: ObservedResponse & { headers: Headers }) => Number(res.headers.get('retry-after') ?? '1') * 1000;
const firstRule = (res: ObservedResponse) => (res.body as { violations?: Array<{ rule: string }> } | undefined)?.violations?.[0]?.rule;

/**
 * One call to the running bus, counted and checked against the OpenAPI document; null when the
 * connection failed (the bus was killed or is starting).
 */
async function call(what: What, method: 'GET' | 'POST', path: string, bearer: string, body?: unknown) {
  let res: ObservedResponse & { headers: Headers };
  try {
    res = await fetchObserved(`${bus!.busUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof Error && err.name === 'TimeoutError') unexpected.push(`${what}: no answer within ${REQUEST_TIMEOUT_MS} ms`);
    tally.add(what, 'network');
    return null;
  }
  tally.add(what, res.status);
  try {
    busApi.check(method, path, res);
  } catch (err) {
    nonConforming.push(err instanceof Error ? err.message : String(err));
  }
  if (res.status === 503 && !res.headers.get('retry-after')) missingRetryAfter.push(`${what} ${method} ${path}`);
  return res;
}

type TellingType = 'telling.started' | 'telling.exposed' | 'telling.ended';

function message(type: TellingType, correlationId: string) {
  return {
    ...(som.examples[type] as Record<string, unknown>),
    message_type: type,
    message_id: randomUUID(),
    correlation_id: correlationId,
    occurred_at: new Date().toISOString(),
  };
}

/**
 * Publishes until the bus answers for good: accepted (202, or 200 duplicate when an earlier attempt
 * was committed after all) or refused (409 sequence.*). A 503, a 429 or a dropped connection is
 * retried with the same message_id, after Retry-After.
 */
async function publish(body: ReturnType<typeof message>, expected: 'accepted' | 'refused'): Promise<void> {
  const path = `/v1/tenants/${tenant.workspaceId}/messages`;
  while (!aborted) {
    const sentAt = Date.now();
    const res = await call('publish', 'POST', path, producerToken, body);
    if (res === null) {
      await pause(500);
      continue;
    }
    if (res.status === 503 || res.status === 429) {
      if (firstRule(res) === 'publish.unavailable') unavailablePublishMs.push(Date.now() - sentAt);
      await pause(retryAfterMs(res));
      continue;
    }
    const outcome = res.status === 202 || res.status === 200 ? 'accepted' : res.status === 409 && firstRule(res)?.startsWith('sequence.') ? 'refused' : null;
    if (outcome === null || outcome !== expected)
      unexpected.push(`publish ${body.message_type} expected ${expected}, got ${res.status} ${JSON.stringify(res.body)}`);
    if (outcome === 'accepted') accepted.get(body.correlation_id)!.push(body.message_id);
    else refused.add(body.message_id);
    return;
  }
}

/** One correlation id's producer: a telling with exposures, and sequence violations now and then. */
async function produce(correlationId: string): Promise<void> {
  accepted.set(correlationId, []);
  await pause(Math.random() * PUBLISH_EVERY_MS);
  await publish(message('telling.exposed', correlationId), 'refused'); // before the telling started
  await publish(message('telling.started', correlationId), 'accepted');
  for (let n = 1; streaming; n++) {
    await pause(PUBLISH_EVERY_MS * (0.5 + Math.random()));
    if (n % 7 === 0)
      await publish(message('telling.started', correlationId), 'refused'); // a second start while one is under way
    else await publish(message('telling.exposed', correlationId), 'accepted');
  }
  await publish(message('telling.ended', correlationId), 'accepted');
  await publish(message('telling.exposed', correlationId), 'refused'); // after the end
}

/** A consumer client: long polls (2 s), records each message, acks the batch; retries what failed for a while. */
async function receiveUntil(done: () => boolean): Promise<void> {
  const base = `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.clientId}`;
  while (!done() && !aborted) {
    const res = await call('receive', 'GET', `${base}/messages?max_messages=10&wait_seconds=2&visibility_timeout=${VISIBILITY_TIMEOUT_S}`, consumerToken);
    if (res === null || res.status !== 200) {
      await pause(res === null ? 500 : retryAfterMs(res));
      continue;
    }
    const messages = (res.body as { messages: Array<{ receipt_handle: string; message_id: string; correlation_id: string; receive_count: number }> }).messages;
    for (const m of messages) receipts.push({ messageId: m.message_id, correlationId: m.correlation_id, receiveCount: m.receive_count });
    if (messages.length === 0) continue;
    // An ack that cannot get through before the leases end is given up: those messages come again.
    const giveUpAt = Date.now() + VISIBILITY_TIMEOUT_S * 1000;
    for (;;) {
      const ack = await call('ack', 'POST', `${base}/ack`, consumerToken, { receipt_handles: messages.map((m) => m.receipt_handle) });
      if ((ack !== null && ack.status === 200) || Date.now() > giveUpAt || aborted) break;
      await pause(ack === null ? 500 : retryAfterMs(ack));
    }
  }
}

/** Kafka records delivery quarantined (invariant A), by reason, as the running process counted them. */
async function quarantined(): Promise<string> {
  const text = await fetch(`${bus!.busUrl}/metrics`).then(
    (res) => res.text(),
    () => '',
  );
  const counts = [...text.matchAll(/^bus_delivery_quarantined_total\{reason="([^"]+)"\} (\d+)/gm)].map(([, reason, n]) => `${reason} ${n}`);
  return `quarantined since the process started: ${counts.join(', ') || 'none'}`;
}

/** The bus's log lines about refused requests of a dependency outage, by the named error's type. */
interface LoggedError {
  type: string;
  cause?: { type?: string; message?: string };
}

function outageLogs(): Map<string, LoggedError[]> {
  const byType = new Map<string, LoggedError[]>();
  for (const line of bus!.process.output().split('\n')) {
    if (!line.includes('"dependency unavailable"')) continue;
    const entry = JSON.parse(line) as { err: LoggedError };
    byType.set(entry.err.type, [...(byType.get(entry.err.type) ?? []), entry.err]);
  }
  return byType;
}

/** Per named error: how many lines, and the first one's cause. */
function summary(logs: Map<string, LoggedError[]>): string {
  return (
    [...logs]
      .map(([type, entries]) => `${type} ${entries.length} (e.g. cause ${entries[0]?.cause?.type}: ${entries[0]?.cause?.message?.slice(0, 160)})`)
      .join('; ') || 'none'
  );
}

it('loses nothing, delivers nothing refused, keeps order and answers no 500 while the bus, Kafka, Postgres and Redis fail in turn', async () => {
  const suiteStarted = Date.now();
  const producers = Array.from({ length: CORRELATION_IDS }, () => produce(`faults-${randomUUID()}`));
  let receiving = true;
  const receivers = [receiveUntil(() => !receiving), receiveUntil(() => !receiving)];
  const report: string[] = [];
  const phase = async (name: string, run: () => Promise<string | void>) => {
    const before = tally.snapshot();
    const started = Date.now();
    const extra = await run();
    const line = `${name}: ${((Date.now() - started) / 1000).toFixed(1)} s; ${tally.since(before)}${extra ? `; ${extra}` : ''}; ${await quarantined()}`;
    report.push(line);
    process.stdout.write(`fault suite — ${line}\n`);
  };
  const accepted202 = () => tally.count('publish', 202);
  /** Seconds until the stream publishes again after a fault ended (the bus recovered). */
  const recovered = async (): Promise<string> => {
    const from = Date.now();
    const before = accepted202();
    await eventually(accepted202, (n) => n > before, { timeoutMs: 90_000, intervalMs: 100, what: 'a publish accepted again' });
    return `publishing again ${((Date.now() - from) / 1000).toFixed(1)} s after it`;
  };
  /**
   * Seconds until delivery has handled every record Kafka held when called: after a broker restart its
   * consumer group waits for the crashed member's session to end; a record whose publish failed after
   * its Kafka send waits DELIVERY_ACCEPTANCE_WAIT before quarantine.
   */
  const deliveryBack = async (): Promise<string> => {
    const from = Date.now();
    await deliveryCaughtUp(bus!, 180_000);
    return `delivery caught up ${((Date.now() - from) / 1000).toFixed(1)} s after that`;
  };

  await phase('steady stream', async () => {
    await pause(STEADY_MS);
  });

  await phase('bus killed (SIGKILL) and restarted', async () => {
    await bus!.process.stop('SIGKILL');
    await bus!.restart();
    const back = [await recovered(), await deliveryBack()].join(', ');
    await pause(STEADY_MS);
    return back;
  });

  await phase(`Kafka stopped for ${KAFKA_DOWN_MS / 1000} s`, async () => {
    const before = unavailablePublishMs.length;
    await stack!.stop('kafka');
    await pause(KAFKA_DOWN_MS);
    await stack!.start('kafka');
    const back = [await recovered(), await deliveryBack()].join(', ');
    await pause(STEADY_MS);
    const answers = unavailablePublishMs.slice(before);
    expect(answers.length).toBeGreaterThan(0);
    return `${back}; ${answers.length} publish.unavailable, slowest answered in ${Math.max(...answers)} ms`;
  });

  await phase('Postgres restarted', async () => {
    // A long poll open on an empty queue when Postgres goes away.
    const idleBase = `/v1/tenants/${idle.workspaceId}/consumers/${idle.consumer.clientId}`;
    const longPoll = call('long poll', 'GET', `${idleBase}/messages?wait_seconds=20`, idleConsumerToken);
    await pause(1_000);
    const stoppedAt = Date.now();
    await stack!.stop('postgres');
    const answer = await longPoll;
    const answeredMs = Date.now() - stoppedAt;
    // The admin API with Postgres down: its documented 503, not a 500.
    const operator = Buffer.from(`${bus!.env.OPERATOR_CLIENT_ID}:${bus!.env.OPERATOR_CLIENT_SECRET}`).toString('base64');
    const adminAnswer = await fetchObserved(`${bus!.portalUrl}/api/admin/organisations`, {
      headers: { Authorization: `Basic ${operator}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    adminApi.check('GET', '/api/admin/organisations', adminAnswer);
    await stack!.start('postgres');
    expect(adminAnswer.status).toBe(503);
    expect(adminAnswer.body).toMatchObject({ code: 'admin.unavailable' });
    expect(adminAnswer.headers.get('retry-after')).toBe('1');
    expect(answer?.status).toBe(503);
    expect(firstRule(answer!)).toBe('queue.unavailable');
    const back = [await recovered(), await deliveryBack()].join(', ');
    // Long polls are woken by new deliveries again (the LISTEN connection came back): a message for the
    // idle consumer ends its 20 s wait at once instead of at its end.
    const waiting = call('long poll', 'GET', `${idleBase}/messages?wait_seconds=20`, idleConsumerToken);
    const publishedAt = Date.now();
    const woken = await call(
      'publish',
      'POST',
      `/v1/tenants/${idle.workspaceId}/messages`,
      idleProducerToken,
      message('telling.started', `idle-${randomUUID()}`),
    );
    expect(woken?.status).toBe(202);
    const received = await waiting;
    const wokenAfterMs = Date.now() - publishedAt;
    expect((received?.body as { messages?: unknown[] } | undefined)?.messages).toHaveLength(1);
    expect(wokenAfterMs).toBeLessThan(5_000);
    await pause(STEADY_MS);
    return [
      back,
      `the open long poll answered 503 ${firstRule(answer!)} ${answeredMs} ms after the stop`,
      `a waiting long poll got a new message ${wokenAfterMs} ms after its publish`,
    ].join('; ');
  });

  await phase(`Redis stopped for ${REDIS_DOWN_MS / 1000} s`, async () => {
    await stack!.stop('redis');
    await pause(REDIS_DOWN_MS);
    await stack!.start('redis');
    const back = await deliveryBack();
    await pause(STEADY_MS);
    return back;
  });

  await phase('stream ended, queue drained', async () => {
    streaming = false;
    await Promise.all(producers);
    const expected = [...accepted.values()].reduce((n, ids) => n + ids.length, 0);
    await eventually(
      () => new Set(receipts.map((r) => r.messageId)),
      (got) => [...accepted.values()].every((ids) => ids.every((id) => got.has(id))),
      { timeoutMs: 120_000, intervalMs: 250, what: `all ${expected} accepted messages received` },
    );
    receiving = false;
    await Promise.all(receivers);
  });

  // What was accepted, refused and received.
  const acceptedIds = new Set([...accepted.values()].flat());
  const firstReceipts = new Map<string, string[]>();
  const seen = new Map<string, number>();
  let duplicates = 0;
  const badDuplicates: string[] = [];
  for (const r of receipts) {
    const previous = seen.get(r.messageId);
    if (previous === undefined) {
      firstReceipts.set(r.correlationId, [...(firstReceipts.get(r.correlationId) ?? []), r.messageId]);
    } else {
      duplicates++;
      // At least once: a message comes again only as a redelivery of the same message, never a second copy.
      if (r.receiveCount <= previous) badDuplicates.push(`${r.messageId} receive_count ${r.receiveCount} after ${previous}`);
    }
    seen.set(r.messageId, r.receiveCount);
  }
  const logs = outageLogs();
  const statuses = [...tally.counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key}: ${n}`)
    .join(', ');
  process.stdout.write(
    [
      `fault suite — ${((Date.now() - suiteStarted) / 1000).toFixed(0)} s of stream on ${CORRELATION_IDS} correlation ids`,
      `  accepted ${acceptedIds.size}, refused on purpose ${refused.size}, receipts ${receipts.length}, duplicates (redeliveries) ${duplicates}`,
      `  statuses: ${statuses}`,
      `  outage log lines (current process): ${summary(logs)}`,
      ...report.map((line) => `  ${line}`),
    ].join('\n') + '\n',
  );

  expect(unexpected).toEqual([]);
  expect(nonConforming).toEqual([]);
  expect(missingRetryAfter).toEqual([]);
  // No 500 (nor any other 5xx but the documented 503) on any route.
  expect([...tally.counts.keys()].filter((key) => /\s5\d\d$/.test(key) && !key.endsWith(' 503'))).toEqual([]);
  // Every accepted message received, first receipts in publish order per correlation id, nothing refused.
  for (const [correlationId, ids] of accepted) expect(firstReceipts.get(correlationId) ?? []).toEqual(ids);
  expect(receipts.filter((r) => refused.has(r.messageId))).toEqual([]);
  expect(receipts.filter((r) => !acceptedIds.has(r.messageId))).toEqual([]);
  expect(badDuplicates).toEqual([]);
  // A publish with Kafka down is answered within the commit timeout.
  expect(Math.max(...unavailablePublishMs)).toBeLessThanOrEqual(COMMIT_TIMEOUT_MS + ANSWER_SLACK_MS);
  // Every 503 of this process was logged with its cause.
  expect(logs.size).toBeGreaterThan(0);
  for (const entries of logs.values()) for (const entry of entries) expect(entry.cause?.message).toEqual(expect.any(String));
}, 600_000);
