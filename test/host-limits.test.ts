import { randomUUID } from 'node:crypto';
import { som } from '@bus/schemas';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The bus host's per-address limit (docs/api.md#limits, "any route") on the bearer routes, where a request with a
 * token the bus already verified has its host limits counted in the same Redis call as its connection
 * quota (docs/gateway.md). What a caller sees must not change: past the limit, every route answers 429
 * rate.limited with Retry-After — before authentication says anything, and without the connection's
 * RateLimit fields, since its windows were not counted.
 */

const AUDIT = som.examples['system.audit'] as Record<string, unknown>;
// Low enough to reach in a test, high enough for the fixture's own calls (tokens) to fit under it.
const PER_ADDRESS_PER_MINUTE = 40;

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;

beforeAll(async () => {
  bus = await startBus({ BUS_LIMIT_PER_ADDRESS_PER_MINUTE: String(PER_ADDRESS_PER_MINUTE) });
  tenants = await TenantFixture.create(bus);
  const permissions = { systemIds: [String(AUDIT.system_id)], messageTypes: Object.keys(som.examples) };
  house = await tenants.tenant(permissions);
  other = await tenants.tenant(permissions);
  await tenants.admin.setQuota('workspace', house.workspaceId, { tier: 'high' });
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

function audit(): string {
  return JSON.stringify({ ...AUDIT, message_id: randomUUID(), correlation_id: `limits-${randomUUID()}`, occurred_at: new Date().toISOString() });
}

type Answer = Awaited<ReturnType<typeof bearerCall>>;

function expectHostRefusal(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(answer.headers.get('ratelimit-policy')).toBeNull();
  expect(answer.body).toMatchObject({ accepted: false, violations: [{ rule: 'rate.limited', message: expect.stringMatching(/^Too many requests/) }] });
}

describe("the host's per-address limit on the bearer routes", () => {
  it('refuses past the limit with 429 on every route, before authentication, whether or not the token was verified before', async () => {
    const producer = await tenants.token(house.producer);
    const consumer = await tenants.token(house.consumer);
    const receivePath = `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/messages?wait_seconds=0`;
    // Both tokens verified (and so held) before the limit is reached.
    expect((await bearerCall(bus, 'GET', receivePath, consumer)).status).toBe(200);

    const statuses: number[] = [];
    let refusal: Answer | undefined;
    for (let i = 0; i < PER_ADDRESS_PER_MINUTE && !refusal; i++) {
      const answer = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producer, audit());
      statuses.push(answer.status);
      if (answer.status === 202) expect(answer.headers.get('ratelimit-policy')).not.toBeNull();
      else refusal = answer;
    }
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(0);
    expect(refusal).toBeDefined();
    expectHostRefusal(refusal as Answer);

    // The same held tokens, on every bearer route, and where authentication would refuse them.
    expectHostRefusal(await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/validate`, producer, audit()));
    expectHostRefusal(await bearerCall(bus, 'GET', receivePath, consumer));
    expectHostRefusal(await bearerCall(bus, 'POST', `/v1/tenants/${other.workspaceId}/messages`, producer, audit()));
    expectHostRefusal(await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, consumer, audit()));
    // A token never verified is counted at once, as before.
    const [header, payload] = producer.split('.') as [string, string, string];
    expectHostRefusal(await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, `${header}.${payload}.${'A'.repeat(86)}`, audit()));
  });
});
