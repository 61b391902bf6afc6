import { randomUUID } from 'node:crypto';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, seededRandom } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The order checker of invariant C over HTTP, with concurrent receivers: messages published
 * on many correlation ids while RECEIVERS clients of one consumer connection receive at once, in random
 * batch sizes, and ack, nack (with and without delay), ack too late or let leases expire (visibility
 * timeouts of 1–2 s). Each receiver behaves as a correct FIFO client: it settles a run of one correlation
 * id in order, one handle at a time, and drops the rest of the run at the first message it does not ack.
 *
 * The receivers' answers arrive in any order, so the checker reasons on a logical clock (one tick per
 * request sent and per answer read) and only about what is certain: an ack sent after a receive's answer
 * arrived cannot have happened before that receive. It asserts
 * - every receive answer holds, per correlation id, a gap-free run in publish order, and each message
 *   before the run was acked by an ack sent before that answer arrived (never handed out while an
 *   earlier one is un-acked);
 * - every message is acked exactly once (one "done" over all receivers);
 * - per correlation id, the successful acks were sent in publish order.
 * `ORDER_CHECK_SEED` fixes every receiver's and publisher's choices (the interleaving is the machine's);
 * `ORDER_CHECK_HTTP_MESSAGES` scales the run.
 *
 * The same checker runs again, smaller, for a consumer with every Sandbox fault on (see
 * docs/testing-tools.md): ordering and nothing lost hold as they are; "acked exactly once" becomes "at
 * least once, and at most once more than the duplicates the message trace says were injected for it".
 */
const MESSAGES = Number(process.env.ORDER_CHECK_HTTP_MESSAGES ?? 600);
const GROUPS = 20;
const RECEIVERS = 4;
const FAULTED_MESSAGES = 60;
const FAULTED_GROUPS = 6;
const SYSTEM_ID = 'storyteller.web';
const adminApi = createOpenApiChecker(openapi.admin);

interface Received {
  receipt_handle: string;
  message_id: string;
  correlation_id: string;
}
interface DeliveryTrace {
  consumer_id: string;
  faults: Array<{ kind: string }>;
}

let bus: RunningBus;
let tenants: TenantFixture;
let tenant: Tenant;
let producerToken: string;
let consumerToken: string;
let operator: string;

beforeAll(async () => {
  // The checker's own traffic is far above one source address's and the whole API's spec limits.
  bus = await startBus({ BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000', BUS_LIMIT_API_PER_SECOND: '100000', BUS_LIMIT_API_BURST: '200000' });
  tenants = await TenantFixture.create(bus);
  tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ['story.context'] });
  await tenants
    .db('workspaces')
    .where({ id: tenant.workspaceId })
    .update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
  producerToken = await tenants.token(tenant.producer);
  consumerToken = await tenants.token(tenant.consumer);
  operator = `Basic ${Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64')}`;
  await deliveryCaughtUp(bus);
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

const storyContext = (messageId: string, correlationId: string) => ({
  ...(som.examples['story.context'] as Record<string, unknown>),
  message_id: messageId,
  correlation_id: correlationId,
  occurred_at: new Date().toISOString(),
});
/**
 * A consumer's processing time, simulated on purpose (not a wait for a condition): now and then an ack
 * is held until about its lease's end, sometimes past it, as a slow consumer's would be.
 */
// eslint-disable-next-line no-restricted-syntax -- deliberate simulated processing time, not a wait for a condition
const processingTime = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The logical clock: one tick per request sent and per answer read (one event loop, so a total order). */
let clock = 0;
const tick = () => ++clock;

/**
 * Calls the bus, checking every answer against the OpenAPI document; a 429 (the connection's quota) is
 * sent again until the quota lets it in, since it was refused before anything happened. Resolves with
 * the answer and the tick at which the request that got it was sent and the tick at which its answer was read.
 */
function call(method: 'GET' | 'POST', path: string, bearer: string, body?: unknown) {
  return eventually(
    async () => {
      const sentAt = tick();
      const response = await bearerCall(bus, method, path, bearer, body);
      return { response, sentAt, answeredAt: tick() };
    },
    ({ response }) => response.status !== 429,
    { intervalMs: 100, timeoutMs: 60_000, retryReadErrors: false, what: `${method} ${path} let in by the connection's quota` },
  );
}

interface Consumer {
  clientId: string;
  token: string;
}
interface CheckerRun {
  seed: number;
  published: number;
  /** Message id → every ack of it that answered `done`, in the order they were sent. */
  acks: Map<string, Array<{ sentAt: number; receiver: number }>>;
  /** Ordering violations (and unknown messages); empty when invariant C held. */
  violations: string[];
}

const consumerPath = (consumer: Consumer, route: string) => `/v1/tenants/${tenant.workspaceId}/consumers/${consumer.clientId}/${route}`;

/** Un-acked messages of the consumer's queue, from the operator's queue stats. */
async function queueDepth(consumer: Consumer): Promise<number> {
  const response = await fetchObserved(`${bus.portalUrl}/api/admin/connections/${consumer.clientId}/queue`, { headers: { Authorization: operator } });
  adminApi.check('GET', `/api/admin/connections/${consumer.clientId}/queue`, response);
  expect(response.status).toBe(200);
  return (response.body as { depth: number }).depth;
}

/**
 * Publishes `messages` messages on `groups` correlation ids while RECEIVERS clients of `consumer`
 * receive, settle and ack them until every message has an ack that answered `done` and the queue is
 * empty (a `done` the bus dropped as an injected duplicate leaves the message un-acked: it comes back).
 */
async function runOrderChecker(consumer: Consumer, messages: number, groups: number): Promise<CheckerRun> {
  const seed = Number(process.env.ORDER_CHECK_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  // Publish order per correlation id: ids[group][index], and message id → (group, index).
  const ids: string[][] = Array.from({ length: groups }, () => []);
  for (let i = 0; i < messages; i++) ids[Math.floor(random() * groups)]!.push(randomUUID());
  const position = new Map(ids.flatMap((group, g) => group.map((id, index) => [id, { group: g, index }] as const)));

  const violations: string[] = [];
  const receives: Array<{ answeredAt: number; receiver: number; messages: string[] }> = [];
  const acks = new Map<string, Array<{ sentAt: number; receiver: number }>>();
  let published = 0;
  let failed = false;
  const deadline = Date.now() + 120_000;
  const finished = async () => acks.size >= messages && (await queueDepth(consumer)) === 0;

  // One publisher per correlation id, each in order (a 202 before the next), all at once: acceptance
  // order per correlation id is this order.
  const publishing = ids.map(async (messageIds, group) => {
    for (const messageId of messageIds) {
      if (failed) return;
      const { response } = await call('POST', `/v1/tenants/${tenant.workspaceId}/messages`, producerToken, storyContext(messageId, `order-${seed}-${group}`));
      expect(response.status).toBe(202);
      published++;
    }
  });

  const receiver = async (id: number) => {
    const choose = seededRandom(seed * 31 + id + 1);
    while (Date.now() < deadline && !failed && !(await finished())) {
      const max = 1 + Math.floor(choose() * 10);
      const visibility = 1 + Math.floor(choose() * 2);
      const { response, answeredAt } = await call(
        'GET',
        `${consumerPath(consumer, 'messages')}?max_messages=${max}&wait_seconds=1&visibility_timeout=${visibility}`,
        consumer.token,
      );
      // Status and body together: a failure shows the bus's error code, not only its status.
      expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 });
      const got = (response.body as { messages: Received[] }).messages;
      receives.push({ answeredAt, receiver: id, messages: got.map((m) => m.message_id) });
      // The runs of this answer, one per correlation id, in the answer's order.
      const runs = new Map<string, Received[]>();
      for (const m of got) runs.set(m.correlation_id, [...(runs.get(m.correlation_id) ?? []), m]);
      // Runs of different correlation ids are independent: settled side by side, each in order.
      const settleRun = async (run: Received[]) => {
        for (const m of run) {
          const action = choose();
          if (action < 0.08) break; // lease left to expire; the rest of the run with it
          if (action < 0.14) {
            const delay = action < 0.11 ? 0 : 1;
            const { response: nack } = await call('POST', consumerPath(consumer, 'nack'), consumer.token, {
              receipt_handles: [m.receipt_handle],
              delay_seconds: delay,
            });
            expect({ status: nack.status, body: nack.body }).toMatchObject({ status: 200 });
            break; // the nack released the run after it
          }
          // Now and then an ack after the lease ended: another receiver may have taken the message.
          if (action > 0.96) await processingTime(visibility * 1000 * (0.8 + choose() * 0.6));
          const { response: ack, sentAt } = await call('POST', consumerPath(consumer, 'ack'), consumer.token, { receipt_handles: [m.receipt_handle] });
          expect({ status: ack.status, body: ack.body }).toMatchObject({ status: 200 });
          const [result] = (ack.body as { results: Array<{ status: string }> }).results;
          if (result?.status !== 'done') break; // stale: someone else holds it now; never ack past it
          acks.set(m.message_id, [...(acks.get(m.message_id) ?? []), { sentAt, receiver: id }]);
        }
      };
      await Promise.all([...runs.values()].map(settleRun));
    }
  };

  // The first failed expectation stops every loop, so none goes on against a stopped bus.
  const stopOnFailure = (work: Promise<void>) =>
    work.catch((err: unknown) => {
      failed = true;
      throw err;
    });
  await Promise.all([...publishing, ...Array.from({ length: RECEIVERS }, (_, i) => receiver(i))].map(stopOnFailure));

  // The ack that settled a message is its last `done` (an earlier one can only be a dropped duplicate):
  // never handed out while an earlier one of its correlation id is un-acked; a run is gap-free, in order.
  const ackSentAt = (messageId: string) => acks.get(messageId)?.at(-1)?.sentAt ?? Number.POSITIVE_INFINITY;
  for (const r of receives) {
    const seen = new Map<number, number>(); // group → last index in this answer
    for (const messageId of r.messages) {
      const p = position.get(messageId);
      if (!p) {
        violations.push(`receiver ${r.receiver} got an unknown message ${messageId}`);
        continue;
      }
      const last = seen.get(p.group);
      if (last !== undefined) {
        if (p.index !== last + 1) violations.push(`receiver ${r.receiver} got a run with a gap or out of order in group ${p.group}: ${last} then ${p.index}`);
      } else {
        for (let j = 0; j < p.index; j++) {
          const earlier = ids[p.group]![j]!;
          if (!(ackSentAt(earlier) < r.answeredAt)) {
            violations.push(
              `receiver ${r.receiver} got group ${p.group} #${p.index} (tick ${r.answeredAt}) while #${j} was un-acked (its ack was sent at tick ${ackSentAt(earlier)})`,
            );
          }
        }
      }
      seen.set(p.group, p.index);
    }
  }
  // Every message acked, and per correlation id in publish order.
  for (const [messageId, p] of position) if (!acks.has(messageId)) violations.push(`group ${p.group} #${p.index} was never acked`);
  for (let group = 0; group < groups; group++) {
    const order = ids[group]!.filter((id) => acks.has(id))
      .sort((a, b) => ackSentAt(a) - ackSentAt(b))
      .map((id) => position.get(id)!.index);
    const expected = [...order].sort((a, b) => a - b);
    if (order.join() !== expected.join()) violations.push(`group ${group} was acked in the order ${order.join(',')}`);
  }

  // Nothing is left for the consumer.
  const { response: rest } = await call('GET', `${consumerPath(consumer, 'messages')}?wait_seconds=0`, consumer.token);
  expect((rest.body as { messages: unknown[] }).messages).toEqual([]);
  return { seed, published, acks, violations };
}

const report = (run: CheckerRun) =>
  run.violations.length > 0 ? [`${run.violations.length} violations (seed ${run.seed}); the first:`, ...run.violations.slice(0, 20)] : [];

it(`keeps FIFO per correlation id over HTTP: ${MESSAGES} messages, ${GROUPS} correlation ids, ${RECEIVERS} concurrent receivers with random nacks, delays and lease expiries`, async () => {
  const run = await runOrderChecker({ clientId: tenant.consumer.clientId, token: consumerToken }, MESSAGES, GROUPS);
  const ackedOnce = [...run.acks.values()].filter((done) => done.length === 1).length;
  expect({ published: run.published, ackedOnce, violations: report(run) }).toEqual({ published: MESSAGES, ackedOnce: MESSAGES, violations: [] });
}, 150_000);

it(`keeps FIFO and loses nothing with the consumer's Sandbox faults on (duplicates, delay, early lease expiry): ${FAULTED_MESSAGES} messages, ${FAULTED_GROUPS} correlation ids`, async () => {
  const credential = await tenants.admin.createConnection({ appId: tenant.appId, kind: 'consumer' });
  // Set before the connection's first call, so its first authentication reads them with it.
  const faults = await fetchObserved(`${bus.portalUrl}/api/admin/connections/${credential.clientId}/faults`, {
    method: 'PUT',
    headers: { Authorization: operator, 'Content-Type': 'application/json' },
    body: JSON.stringify({ duplicate_rate: 0.3, delay_ms: 200, early_expiry_rate: 0.2 }),
  });
  adminApi.check('PUT', `/api/admin/connections/${credential.clientId}/faults`, faults);
  expect(faults.status).toBe(200);
  const consumer = { clientId: credential.clientId, token: await tenants.token(credential) };

  const run = await runOrderChecker(consumer, FAULTED_MESSAGES, FAULTED_GROUPS);

  // Acked at least once, and at most once more than the duplicates the bus says it injected for it.
  const injected = new Map<string, number>();
  const offBound: string[] = [];
  for (const [messageId, done] of run.acks) {
    const trace = await bearerCall(bus, 'GET', `/v1/tenants/${tenant.workspaceId}/messages/${messageId}`, producerToken);
    expect(trace.status).toBe(200);
    const delivery = (trace.body as { deliveries: DeliveryTrace[] }).deliveries.find((d) => d.consumer_id === consumer.clientId)!;
    for (const fault of delivery.faults) injected.set(fault.kind, (injected.get(fault.kind) ?? 0) + 1);
    const duplicates = delivery.faults.filter((f) => f.kind === 'duplicate').length;
    if (done.length > 1 + duplicates) offBound.push(`${messageId} acked ${done.length} times with ${duplicates} duplicates injected`);
  }
  expect({ published: run.published, acked: run.acks.size, offBound, violations: report(run) }).toEqual({
    published: FAULTED_MESSAGES,
    acked: FAULTED_MESSAGES,
    offBound: [],
    violations: [],
  });
  // The faults were on: each kind happened.
  expect(Object.fromEntries(injected)).toEqual({ duplicate: expect.any(Number), delay: FAULTED_MESSAGES, early_expiry: expect.any(Number) });
}, 150_000);
