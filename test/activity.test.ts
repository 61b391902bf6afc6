import { randomUUID } from 'node:crypto';
import { createDatabase } from '@bus/db';
import { PeopleStore } from '@bus/portal';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, freePort } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The portal's activity charts' data end to end (docs/portal.md#activity-charts): real publishes,
 * refusals, deliveries and acks on the all-in-one bus, counted by its processes and read back through
 * GET /api/portal/…/activity as a person with a session.
 */
const portalApi = createOpenApiChecker(openapi.portal);
const SYSTEM_ID = 'storyteller.web';

interface ActivityBody {
  minutes: number;
  points: Array<{ minute: string; published: number; delivered: number; acked: number; refused: Record<string, number>; queue_depth: number | null }>;
  rules: string[];
}

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
const cookies: Record<'houseAdmin' | 'otherHouse', string> = { houseAdmin: '', otherHouse: '' };

beforeAll(async () => {
  const issuerPort = await freePort();
  // Sign-in for people on, so the portal API answers; the sessions are seeded as the sign-in's callback writes them.
  bus = await startBus({
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${issuerPort}`,
    PORTAL_OIDC_CLIENT_ID: 'bus-portal',
    PORTAL_OIDC_CLIENT_SECRET: 'activity-client-secret-not-used',
    PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1/portal/callback',
  });
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  // Only telling.started is permitted: a story.context is refused by the app's policy.
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ['telling.started'] });
  other = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ['telling.started'] });
  const db = createDatabase({ url: bus.env.DATABASE_URL!, poolMax: 1, applicationName: 'activity-test-sessions' });
  try {
    const people = new PeopleStore(db);
    const session = async (organisationId: string) =>
      (await people.createSession({ subject: `admin-${organisationId}`, name: 'House admin', grants: [{ role: 'house_admin', organisationId }] }, 3_600_000))
        .cookie;
    cookies.houseAdmin = await session(house.organisationId);
    cookies.otherHouse = await session(other.organisationId);
  } finally {
    await db.destroy();
  }
}, 180_000);

afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

async function portalGet(route: string, as: keyof typeof cookies = 'houseAdmin') {
  const res = await fetchObserved(`${bus.portalUrl}${route}`, { headers: { Cookie: `bus_portal_session=${cookies[as]}` } });
  portalApi.check('GET', route, res);
  return res;
}

function message(type: string) {
  return {
    ...(som.examples[type] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: `c-${randomUUID()}`,
    occurred_at: new Date().toISOString(),
  };
}

const total = (body: ActivityBody, field: 'published' | 'delivered' | 'acked') => body.points.reduce((sum, p) => sum + p[field], 0);
const refusedBy = (body: ActivityBody, rule: string) => body.points.reduce((sum, p) => sum + (p.refused[rule] ?? 0), 0);

describe('activity per minute (the portal charts)', () => {
  it('counts what the bus published, refused by rule, delivered and what was acked, per workspace and per connection', async () => {
    const producerToken = await tenants.token(house.producer);
    const consumerToken = await tenants.token(house.consumer);
    const publish = (body: unknown) => bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producerToken, body);
    for (let i = 0; i < 3; i += 1) expect((await publish(message('telling.started'))).status).toBe(202);
    const refusals = [await publish(message('story.context')), await publish(message('story.context'))];
    for (const r of refusals) expect(r.status).toBe(403);
    const rule = (refusals[0]!.body as { violations: Array<{ rule: string }> }).violations[0]!.rule;

    // Receive all three, ack two: one stays un-acked in the queue.
    const handles: string[] = [];
    await eventually(
      async () => {
        const res = await bearerCall(
          bus,
          'GET',
          `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/messages?wait_seconds=5&max_messages=10`,
          consumerToken,
        );
        handles.push(...(res.body as { messages: Array<{ receipt_handle: string }> }).messages.map((m) => m.receipt_handle));
        return handles.length;
      },
      (n) => n >= 3,
      { timeoutMs: 30_000, what: 'three messages received' },
    );
    const ack = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/ack`, consumerToken, {
      receipt_handles: handles.slice(0, 2),
    });
    expect(ack.status).toBe(200);

    const workspace = await eventually(
      async () => (await portalGet(`/api/portal/workspaces/${house.workspaceId}/activity?minutes=10`)).body as ActivityBody,
      (b) => total(b, 'published') === 3 && total(b, 'delivered') === 3 && total(b, 'acked') === 2 && refusedBy(b, rule) === 2,
      { timeoutMs: 30_000, what: 'the workspace activity counting the traffic' },
    );
    expect(workspace.minutes).toBe(10);
    expect(workspace.points).toHaveLength(10);
    expect(workspace.rules).toEqual([rule]);

    const producer = (await portalGet(`/api/portal/connections/${house.producer.clientId}/activity`)).body as ActivityBody;
    expect(producer.points).toHaveLength(60);
    expect([total(producer, 'published'), refusedBy(producer, rule), total(producer, 'delivered')]).toEqual([3, 2, 0]);

    // Delivery samples the queue: one delivery stays un-acked.
    const consumer = await eventually(
      async () => (await portalGet(`/api/portal/connections/${house.consumer.clientId}/activity?minutes=5`)).body as ActivityBody,
      (b) => b.points.some((p) => p.queue_depth === 1),
      { timeoutMs: 45_000, what: "the consumer's sampled queue depth" },
    );
    expect([total(consumer, 'published'), total(consumer, 'delivered'), total(consumer, 'acked')]).toEqual([0, 3, 2]);

    // Another house's workspace counted none of it.
    const elsewhere = (await portalGet(`/api/portal/workspaces/${other.workspaceId}/activity`, 'otherHouse')).body as ActivityBody;
    expect(total(elsewhere, 'published')).toBe(0);
  }, 120_000);

  it('answers only who may read the workspace or connection, and a bounded span', async () => {
    expect((await portalGet(`/api/portal/workspaces/${house.workspaceId}/activity`, 'otherHouse')).body).toMatchObject({ code: 'portal.forbidden' });
    expect((await portalGet(`/api/portal/connections/${house.consumer.clientId}/activity`, 'otherHouse')).status).toBe(403);
    expect((await portalGet('/api/portal/workspaces/waaaaaaaaaaaa/activity')).body).toMatchObject({ code: 'admin.not_found' });
    for (const minutes of ['0', '1441', 'abc', '1.5']) {
      const res = await portalGet(`/api/portal/workspaces/${house.workspaceId}/activity?minutes=${minutes}`);
      expect([res.status, (res.body as { code: string }).code]).toEqual([400, 'admin.request_invalid']);
    }
    expect(((await portalGet(`/api/portal/workspaces/${house.workspaceId}/activity?minutes=1440`)).body as ActivityBody).points).toHaveLength(1440);
    const signedOut = await fetchObserved(`${bus.portalUrl}/api/portal/workspaces/${house.workspaceId}/activity`);
    expect(signedOut.status).toBe(401);
  });
});
