import { randomUUID } from 'node:crypto';
import { som } from '@bus/schemas';
import { eventually } from '@bus/testing';
import { startReplica, startStandaloneBus, type ServiceReplica, type StandaloneBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { exampleMessage } from './support/messages';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The guarantees that hold across replicas, on two of each service as standalone processes
 * (docs/architecture.md#data-flow): gateway A and B, delivery A and B in one consumer group, pull-api
 * A and B, one auth, all on one database, Redis and Kafka. What one gateway decided (a story's
 * sequence, a message_id, a connection's quota, a revocation) holds on the other; a delivery through
 * either wakes a long poll on either pull-api; two pull-apis never lease one message twice; a
 * SIGKILLed delivery process loses nothing and keeps each correlation id's order.
 */
const SYSTEM_ID = 'storyteller.web';

interface Received {
  receipt_handle: string;
  message_id: string;
  correlation_id: string;
}

let bus: StandaloneBus;
let replicas: Record<'gateway' | 'pull-api' | 'delivery', ServiceReplica>;
let gateways: [string, string];
let pullApis: [string, string];
let tenants: TenantFixture;
let tenant: Tenant;
let producerToken: string;
let consumerToken: string;

beforeAll(async () => {
  // The tests' own bursts are above one source address's and the whole API's spec limits.
  bus = await startStandaloneBus({ BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000', BUS_LIMIT_API_PER_SECOND: '100000', BUS_LIMIT_API_BURST: '200000' });
  const [gateway, pullApi, delivery] = await Promise.all([
    startReplica('gateway', bus.env),
    // At debug level: its "long poll waiting" line tells the test a poll is parked.
    startReplica('pull-api', bus.env, { LOG_LEVEL: 'debug' }),
    startReplica('delivery', bus.env),
  ]);
  replicas = { gateway, 'pull-api': pullApi, delivery };
  gateways = [bus.urls.gateway, gateway.url];
  pullApis = [bus.urls['pull-api'], pullApi.url];
  tenants = await TenantFixture.create({ busUrl: bus.urls.auth, env: bus.env });
  tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  await tenants.admin.setQuota('workspace', tenant.workspaceId, { tier: 'custom', perSecond: 200, burst: 400, perDay: 10_000_000 });
  producerToken = await tenants.token(tenant.producer);
  consumerToken = await tenants.token(tenant.consumer);
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(replicas ?? {}).map((r) => r.process.stop()));
  await tenants?.close();
  await bus?.stop();
}, 30_000);

const message = (type: string, correlationId: string) => exampleMessage(type, correlationId, SYSTEM_ID);

const publishPath = (workspaceId: string) => `/v1/tenants/${workspaceId}/messages`;
const consumerPath = (route: string) => `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.clientId}/${route}`;

/** Publishes `body` through `gateway` as `token` (the tenant's producer by default). */
function publish(gateway: string, body: unknown, token = producerToken, workspaceId = tenant.workspaceId) {
  return bearerCall({ busUrl: gateway }, 'POST', publishPath(workspaceId), token, body);
}

async function receive(pullApi: string, waitSeconds: number, max = 10): Promise<Received[]> {
  const res = await bearerCall({ busUrl: pullApi }, 'GET', consumerPath(`messages?wait_seconds=${waitSeconds}&max_messages=${max}`), consumerToken);
  expect(res.status).toBe(200);
  return (res.body as { messages: Received[] }).messages;
}

async function ack(pullApi: string, messages: Received[]): Promise<void> {
  if (messages.length === 0) return;
  const res = await bearerCall({ busUrl: pullApi }, 'POST', consumerPath('ack'), consumerToken, { receipt_handles: messages.map((m) => m.receipt_handle) });
  expect(res.status).toBe(200);
  expect((res.body as { results: Array<{ status: string }> }).results.map((r) => r.status)).toEqual(messages.map(() => 'done'));
}

/** Receives and acks on `pullApi` until `count` messages came, in the order they came. */
async function receiveAll(pullApi: string, count: number): Promise<Received[]> {
  const got: Received[] = [];
  await eventually(
    async () => {
      const messages = await receive(pullApi, 1);
      await ack(pullApi, messages);
      got.push(...messages);
      return got.length;
    },
    (n) => n >= count,
    { timeoutMs: 30_000, intervalMs: 0, retryReadErrors: false, what: `${count} messages received on ${pullApi}` },
  );
  return got;
}

/**
 * Publishes `perId` messages on each of `ids` correlation ids, each id's messages one after the other
 * through gateway A and B in turn (the ids side by side); `between(n)` runs after the n-th accepted
 * message of the first id. Returns each id's message ids in acceptance order.
 */
async function publishStories(ids: string[], perId: number, between?: (n: number) => void): Promise<Map<string, string[]>> {
  const order = new Map(ids.map((id) => [id, [] as string[]]));
  await Promise.all(
    ids.map(async (correlationId, k) => {
      for (let i = 0; i < perId; i++) {
        const body = message('story.context', correlationId);
        const res = await publish(gateways[(i + k) % 2] as string, body);
        expect(res.status).toBe(202);
        order.get(correlationId)?.push(body.message_id);
        if (k === 0) between?.(i + 1);
      }
    }),
  );
  return order;
}

/** Each correlation id's message ids in the order `received` holds them. */
function byCorrelationId(received: Received[]): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  for (const m of received) seen.set(m.correlation_id, [...(seen.get(m.correlation_id) ?? []), m.message_id]);
  return seen;
}

/** Statuses (and rule ids of refusals) of answers, sorted, for races whose winner is either. */
const outcomes = (answers: Array<{ status: number; body: unknown }>) =>
  answers
    .map(({ status, body }) => {
      const b = body as { duplicate?: boolean; violations?: Array<{ rule: string }> };
      return `${status}${b.duplicate ? ' duplicate' : ''}${b.violations ? ` ${b.violations.map((v) => v.rule).join(',')}` : ''}`;
    })
    .sort();

describe('two replicas of each service', () => {
  it('keeps each correlation id in publish order across both gateways', async () => {
    const ids = Array.from({ length: 4 }, () => `order-${randomUUID()}`);
    const published = await publishStories(ids, 8);
    expect(byCorrelationId(await receiveAll(pullApis[0], 32))).toEqual(published);
  }, 30_000);

  it('accepts exactly one of two first messages of a story sent to both gateways at once', async () => {
    const correlationId = `race-${randomUUID()}`;
    const answers = await Promise.all(gateways.map((g) => publish(g, message('telling.started', correlationId))));
    expect(outcomes(answers)).toEqual(['202', '409 sequence.telling.already_started']);
    await receiveAll(pullApis[0], 1);
  }, 30_000);

  it('accepts one message_id sent to both gateways at once once, and answers the other 200 duplicate', async () => {
    const body = message('story.context', `dup-${randomUUID()}`);
    const answers = await Promise.all(gateways.map((g) => publish(g, body)));
    expect(outcomes(answers)).toEqual(['200 duplicate', '202']);
    expect((await receiveAll(pullApis[1], 1)).map((m) => m.message_id)).toEqual([body.message_id]);
  }, 30_000);

  it('refuses a revoked producer on both gateways within 2 s', async () => {
    const revoked = await tenants.admin.createConnection({ appId: tenant.appId, kind: 'producer' });
    const token = await tenants.token(revoked);
    // A body the schema refuses: the identity check comes first, so each probe says whether the
    // connection is still active (400) or revoked (403) and publishes nothing.
    const probe = () => Promise.all(gateways.map((g) => publish(g, { not: 'a message' }, token)));
    expect((await probe()).map((r) => r.status)).toEqual([400, 400]);
    await tenants.admin.revokeConnection(revoked.clientId);
    const refused = await eventually(probe, (answers) => answers.every((r) => r.status === 403), {
      timeoutMs: 2_000,
      retryReadErrors: false,
      what: 'the revocation on both gateways',
    });
    expect(outcomes(refused)).toEqual(['403 producer.not_registered', '403 producer.not_registered']);
  }, 30_000);

  it("counts one connection's daily quota once across both gateways", async () => {
    const limited = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ['story.context'] });
    await tenants.admin.setQuota('workspace', limited.workspaceId, { tier: 'custom', perSecond: 200, burst: 400, perDay: 6 });
    const token = await tenants.token(limited.producer);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => publish(gateways[i % 2] as string, message('story.context', `quota-${i}`), token, limited.workspaceId)),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(6);
    expect(outcomes(answers.filter((r) => r.status !== 202))).toEqual(Array(4).fill('429 quota.exceeded'));
  }, 30_000);

  it('wakes a long poll parked on pull-api B with a message delivered through either gateway', async () => {
    const parked = () => replicas['pull-api'].process.output().match(/"msg":"long poll waiting"/g)?.length ?? 0;
    for (const gateway of gateways) {
      const before = parked();
      const poll = receive(pullApis[1], 20);
      await eventually(parked, (n) => n > before, { timeoutMs: 10_000, what: 'the poll parked on pull-api B' });
      const body = message('story.context', `wake-${randomUUID()}`);
      expect((await publish(gateway, body)).status).toBe(202);
      const got = await poll;
      expect(got.map((m) => m.message_id)).toEqual([body.message_id]);
      await ack(pullApis[1], got);
    }
  }, 60_000);

  it('never leases one message to two receive loops on the two pull-apis', async () => {
    const ids = Array.from({ length: 20 }, () => `lease-${randomUUID()}`);
    await publishStories(ids, 2);
    const got: Received[] = [];
    const loop = async (pullApi: string) => {
      await eventually(
        async () => {
          const messages = await receive(pullApi, 1, 3);
          got.push(...messages);
          await ack(pullApi, messages);
          return got.length;
        },
        (n) => n >= 40,
        { timeoutMs: 30_000, intervalMs: 0, retryReadErrors: false, what: 'every message received by one loop or the other' },
      );
    };
    await Promise.all(pullApis.map(loop));
    const ids2 = got.map((m) => m.message_id);
    expect(new Set(ids2).size).toBe(ids2.length);
    expect(ids2).toHaveLength(40);
  }, 60_000);

  it('loses nothing and keeps order when a delivery process is SIGKILLed mid-traffic', async () => {
    const ids = Array.from({ length: 4 }, () => `kill-${randomUUID()}`);
    const published = await publishStories(ids, 12, (n) => {
      if (n === 4) bus.processes.delivery.child.kill('SIGKILL');
    });
    expect(byCorrelationId(await receiveAll(pullApis[0], 48))).toEqual(published);
  }, 60_000);
});
