import { randomUUID } from 'node:crypto';
import { createDatabase, type Knex } from '@bus/db';
import { TenancyFixture } from '@bus/fixtures';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, msUntil } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';

/**
 * The operator's admin API on the compiled all-in-one, end to end through the bus: every
 * tenancy object is made through the API, every effect is observed on the bus routes, and every
 * answer of both hosts is checked against its OpenAPI document.
 */

const adminApi = createOpenApiChecker(openapi.admin);
const busApi = createOpenApiChecker(openapi.bus);
const catalogueApi = createOpenApiChecker(openapi.catalogue);
const SYSTEM_ID = 'storyteller.web';
/** The issue's goal for a change to reach every service (the spec allows ~30 s). */
const PROPAGATION_GOAL_MS = 2_000;

interface Connection {
  client_id: string;
  workspace_id: string;
  kind: string;
  status: string;
  credential_version: number;
  created_at: string;
}
interface Issued {
  client_id: string;
  client_secret: string;
  credential_version: number;
  connection: Connection;
}

let bus: RunningBus;
let operatorAuth: string;

beforeAll(async () => {
  // A Preview bus (not a Sandbox): the admin API works as in any environment, except that it refuses
  // consumer fault injection (docs/testing-tools.md); test/consumer-tools.test.ts runs a Sandbox.
  bus = await startBus({ BUS_ENVIRONMENT: 'preview' });
  operatorAuth = basic(bus.env.OPERATOR_CLIENT_ID!, bus.env.OPERATOR_CLIENT_SECRET!);
  // The replay test first receives what it published: delivery must be past the shared topic's history.
  await deliveryCaughtUp(bus);
}, 180_000);
afterAll(async () => {
  await bus?.stop();
}, 30_000);

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

/** Calls the admin API as the operator (or with `auth`) and checks the answer against its OpenAPI document. */
async function admin(method: string, path: string, body?: unknown, opts: { auth?: string | null; contentType?: string } = {}) {
  const headers: Record<string, string> = {};
  const auth = opts.auth === undefined ? operatorAuth : opts.auth;
  if (auth !== null) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
  const response = await fetchObserved(`${bus.portalUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  adminApi.check(method, path, response);
  return response;
}

async function created<T>(path: string, body: unknown): Promise<T> {
  const res = await admin('POST', path, body);
  expect(res.status).toBe(201);
  return res.body as T;
}

/** A house with one workspace and one app allowed to publish telling.* from SYSTEM_ID. */
async function house(quota: unknown = { tier: 'high' }) {
  const organisation = await created<{ id: string }>('/api/admin/organisations', { name: 'House', kind: 'house', quota });
  const workspace = await created<{ id: string }>('/api/admin/workspaces', { organisation_id: organisation.id, name: 'Stories' });
  const app = await created<{ id: string }>('/api/admin/apps', { workspace_id: workspace.id, name: 'Studio' });
  const permitted = await admin('PUT', `/api/admin/apps/${app.id}/permissions`, {
    system_ids: [SYSTEM_ID],
    message_types: ['telling.started', 'telling.exposed', 'telling.ended'],
  });
  expect(permitted.status).toBe(200);
  return { organisationId: organisation.id, workspaceId: workspace.id, appId: app.id };
}

async function tokenResponse(clientId: string, clientSecret: string) {
  const res = await fetchObserved(`${bus.busUrl}/v1/oauth/token`, {
    method: 'POST',
    headers: { Authorization: basic(encodeURIComponent(clientId), encodeURIComponent(clientSecret)), 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });
  busApi.check('POST', '/v1/oauth/token', res);
  return res;
}

async function token(clientId: string, clientSecret: string): Promise<string> {
  const res = await tokenResponse(clientId, clientSecret);
  expect(res.status).toBe(200);
  return (res.body as { access_token: string }).access_token;
}

function message(type = 'telling.started', correlationId = `c-${randomUUID()}`) {
  return { ...(som.examples[type] as Record<string, unknown>), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString() };
}

const busCall = (method: string, path: string, bearer: string, body?: unknown) => bearerCall(bus, method, path, bearer, body);

const publish = (workspaceId: string, bearer: string, body: unknown = message()) => busCall('POST', `/v1/tenants/${workspaceId}/messages`, bearer, body);
const firstRule = (body: unknown) => (body as { violations?: Array<{ rule: string }> }).violations?.[0]?.rule;

/** Waits on answers that are checked against their OpenAPI documents: a failed check ends the wait at once. */
const ANSWERS_CHECKED = { retryReadErrors: false } as const;

/** The first answer of `call` that is not 429 rate.limited: sent again until the connection's rate window has passed. */
const afterRateWindow = (call: () => ReturnType<typeof busCall>) =>
  eventually(call, (res) => !(res.status === 429 && firstRule(res.body) === 'rate.limited'), {
    ...ANSWERS_CHECKED,
    intervalMs: 200,
    timeoutMs: 5_000,
    what: 'the rate window passed',
  });

describe('operator authentication', () => {
  it('refuses a request without credentials, with a wrong secret or with a bus token: 401 admin.unauthorized', async () => {
    const t = await house();
    const producer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const busToken = await token(producer.client_id, producer.client_secret);
    for (const auth of [
      null,
      basic(bus.env.OPERATOR_CLIENT_ID!, 'not-the-secret-not-the-secret'),
      basic('someone', bus.env.OPERATOR_CLIENT_SECRET!),
      `Bearer ${busToken}`,
      'Basic !!!',
    ]) {
      const res = await admin('GET', '/api/admin/organisations', undefined, { auth });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'admin.unauthorized' });
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('serves its OpenAPI document without credentials', async () => {
    const res = await admin('GET', '/api/admin/openapi.json', undefined, { auth: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(openapi.admin);
  });

  it('never writes the operator secret or an issued client secret to the log', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    expect(bus.process.output()).not.toContain(bus.env.OPERATOR_CLIENT_SECRET);
    expect(bus.process.output()).not.toContain(issued.client_secret);
  });
});

describe('tenancy and the credential lifecycle, through the bus', () => {
  it('create → token → publish → rotate (old tokens refused, old secret works until the overlap ends) → revoke', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    expect(issued).toMatchObject({ credential_version: 1, connection: { kind: 'producer', status: 'active', workspace_id: t.workspaceId } });
    const v1Token = await token(issued.client_id, issued.client_secret);
    expect((await publish(t.workspaceId, v1Token)).status).toBe(202);

    const overlapSeconds = 4;
    const rotated = await admin('POST', `/api/admin/connections/${issued.client_id}/rotate`, { overlap_seconds: overlapSeconds });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body as Issued & { previous_secret_usable_until: string };
    expect(fresh.credential_version).toBe(2);
    expect(fresh.client_secret).not.toBe(issued.client_secret);

    // The token of version 1 is refused within the goal…
    const refusedAfter = await msUntil(async () => (await publish(t.workspaceId, v1Token)).status === 401, ANSWERS_CHECKED);
    expect(refusedAfter).toBeLessThanOrEqual(PROPAGATION_GOAL_MS);
    // …while the previous secret still obtains (version 2) tokens during the overlap, and those publish.
    const overlapToken = await token(issued.client_id, issued.client_secret);
    expect((await publish(t.workspaceId, overlapToken)).status).toBe(202);
    // After the overlap the previous secret gets invalid_client (within a few seconds of its end); the new one keeps working.
    const late = await eventually(
      () => tokenResponse(issued.client_id, issued.client_secret),
      (res) => res.status === 401,
      {
        timeoutMs: Math.max(0, Date.parse(fresh.previous_secret_usable_until) - Date.now()) + 5_000,
        // Gently: the token route allows a client id 30 requests per 5 minutes.
        intervalMs: 500,
        ...ANSWERS_CHECKED,
        what: 'the previous secret refused after the overlap',
      },
    );
    expect(late.body).toMatchObject({ error: 'invalid_client' });
    const v2Token = await token(issued.client_id, fresh.client_secret);
    expect((await publish(t.workspaceId, v2Token)).status).toBe(202);

    const revoked = await admin('POST', `/api/admin/connections/${issued.client_id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked' });
    const revokedAfter = await msUntil(async () => {
      const res = await publish(t.workspaceId, v2Token);
      return res.status === 403 && firstRule(res.body) === 'producer.not_registered';
    }, ANSWERS_CHECKED);
    expect(revokedAfter).toBeLessThanOrEqual(PROPAGATION_GOAL_MS);
    expect((await tokenResponse(issued.client_id, fresh.client_secret)).body).toMatchObject({ error: 'invalid_client' });
    // Revoking again changes nothing; rotating a revoked connection is a conflict.
    expect((await admin('POST', `/api/admin/connections/${issued.client_id}/revoke`)).status).toBe(200);
    const conflict = await admin('POST', `/api/admin/connections/${issued.client_id}/rotate`, { overlap_seconds: 0 });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'admin.conflict' });
    process.stdout.write(`admin API propagation: rotation ${refusedAfter} ms, revocation ${revokedAfter} ms\n`);
  }, 30_000);

  it('a second rotation ends the older secret at once: only the immediately previous one keeps its overlap (docs/api.md#connections-and-credentials)', async () => {
    const t = await house();
    const v1 = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const rotate = (overlapSeconds: number) => admin('POST', `/api/admin/connections/${v1.client_id}/rotate`, { overlap_seconds: overlapSeconds });
    const firstRotation = await rotate(3600);
    expect(firstRotation.status).toBe(200);
    const v2 = firstRotation.body as Issued;
    // Within its hour the version-1 secret still obtains tokens…
    expect((await tokenResponse(v1.client_id, v1.client_secret)).status).toBe(200);

    const overlapSeconds = 3;
    const secondRotation = await rotate(overlapSeconds);
    expect(secondRotation.status).toBe(200);
    const v3 = secondRotation.body as Issued & { previous_secret_usable_until: string };
    expect(v3.credential_version).toBe(3);
    // …until the next rotation, which ends it at once although its hour has not passed.
    const v1Refused = await tokenResponse(v1.client_id, v1.client_secret);
    expect(v1Refused.status).toBe(401);
    expect(v1Refused.body).toMatchObject({ error: 'invalid_client' });
    // The version-2 secret keeps its own overlap: it obtains (version 3) tokens that publish…
    expect((await publish(t.workspaceId, await token(v1.client_id, v2.client_secret))).status).toBe(202);
    // …and is refused once that overlap is over; version 3 works throughout, version 1 never again.
    const v2Refused = await eventually(
      () => tokenResponse(v1.client_id, v2.client_secret),
      (res) => res.status !== 200,
      { timeoutMs: overlapSeconds * 1000 + 5_000, intervalMs: 200, what: 'the version-2 secret refused after its overlap' },
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(v3.previous_secret_usable_until));
    expect(v2Refused.status).toBe(401);
    expect(v2Refused.body).toMatchObject({ error: 'invalid_client' });
    expect((await publish(t.workspaceId, await token(v1.client_id, v3.client_secret))).status).toBe(202);
    expect((await tokenResponse(v1.client_id, v1.client_secret)).status).toBe(401);
  }, 30_000);

  it('removes a connection for good: its token is refused and it is listed as removed', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const bearer = await token(issued.client_id, issued.client_secret);
    expect((await admin('DELETE', `/api/admin/connections/${issued.client_id}`)).status).toBe(204);
    await msUntil(async () => (await publish(t.workspaceId, bearer)).status === 403, {
      timeoutMs: PROPAGATION_GOAL_MS,
      ...ANSWERS_CHECKED,
      what: 'the removed connection refused',
    });
    const listed = await admin('GET', `/api/admin/connections?workspace_id=${t.workspaceId}`);
    expect((listed.body as { connections: Connection[] }).connections).toEqual([expect.objectContaining({ client_id: issued.client_id, status: 'removed' })]);
    expect((await admin('POST', `/api/admin/connections/${issued.client_id}/revoke`)).status).toBe(409);
  });

  it('applies a tier change to the next request of an existing connection, with no new credentials', async () => {
    const t = await house({ tier: 'standard' });
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const bearer = await token(issued.client_id, issued.client_secret);
    const validate = () => busCall('POST', `/v1/tenants/${t.workspaceId}/validate`, bearer, message());
    expect((await validate()).status).toBe(202);

    const custom = await admin('PUT', `/api/admin/workspaces/${t.workspaceId}/quota`, { tier: 'custom', per_second: 1, burst: 1, per_day: 3 });
    expect(custom.status).toBe(200);
    expect(custom.body).toMatchObject({ quota: { tier: 'custom', per_second: 1, burst: 1, per_day: 3 } });
    const statuses: Array<[number, string | undefined]> = [];
    for (let i = 0; i < 6; i++) {
      // One a second: each waits out the rate window of the one before (the counts of the second
      // before the change still hold under the new quota). A rate.limited answer counts nothing for the day.
      const res = await afterRateWindow(validate);
      statuses.push([res.status, firstRule(res.body)]);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // One request a second passes until the day's three (the first came before the change) are spent.
    expect(statuses.slice(0, 2)).toEqual([
      [202, undefined],
      [202, undefined],
    ]);
    expect(statuses.slice(2)).toEqual(Array(4).fill([429, 'quota.exceeded']));
    // Two requests within a second: the second is over the custom rate.
    await admin('PUT', `/api/admin/workspaces/${t.workspaceId}/quota`, { tier: 'custom', per_second: 1, burst: 1, per_day: 100 });
    expect((await afterRateWindow(validate)).status).toBe(202);
    const tooFast = await validate();
    expect([tooFast.status, firstRule(tooFast.body)]).toEqual([429, 'rate.limited']);

    // The high tier's rate applies to this same second at once: its two requests so far are far below 100.
    const high = await admin('PUT', `/api/admin/workspaces/${t.workspaceId}/quota`, { tier: 'high' });
    expect(high.body).toMatchObject({ quota: { tier: 'high', per_second: 100, burst: 200, per_day: 1_000_000 } });
    expect((await validate()).status).toBe(202);
  }, 30_000);

  it("gives a vendor's connections in a house the vendor's quota, not the house's", async () => {
    const t = await house({ tier: 'high' });
    const vendor = await created<{ id: string; quota: { tier: string } }>('/api/admin/organisations', { name: 'Vendor', kind: 'vendor' });
    expect(vendor.quota.tier).toBe('minimal');
    const app = await created<{ id: string; organisation_id: string }>('/api/admin/apps', {
      workspace_id: t.workspaceId,
      organisation_id: vendor.id,
      name: 'Vendor tool',
    });
    expect(app.organisation_id).toBe(vendor.id);
    await admin('PUT', `/api/admin/apps/${app.id}/permissions`, { system_ids: [SYSTEM_ID], message_types: ['telling.started'] });
    const issued = await created<Issued>('/api/admin/connections', { app_id: app.id, kind: 'producer' });
    const bearer = await token(issued.client_id, issued.client_secret);
    await admin('PUT', `/api/admin/organisations/${vendor.id}/quota`, { tier: 'custom', per_second: 1, burst: 1, per_day: 1 });
    expect((await busCall('POST', `/v1/tenants/${t.workspaceId}/validate`, bearer, message())).status).toBe(202);
    const second = await busCall('POST', `/v1/tenants/${t.workspaceId}/validate`, bearer, message());
    expect(second.status).toBe(429);
  });

  it('refuses the next publish once a permission is removed', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const bearer = await token(issued.client_id, issued.client_secret);
    expect((await publish(t.workspaceId, bearer)).status).toBe(202);
    const narrowed = await admin('PUT', `/api/admin/apps/${t.appId}/permissions`, { system_ids: [SYSTEM_ID], message_types: ['telling.ended'] });
    expect(narrowed.body).toMatchObject({ permissions: { system_ids: [SYSTEM_ID], message_types: ['telling.ended'] } });
    const refusedAfter = await msUntil(async () => {
      const res = await publish(t.workspaceId, bearer);
      return res.status === 403 && firstRule(res.body) === 'policy.message_type_not_allowed';
    }, ANSWERS_CHECKED);
    expect(refusedAfter).toBeLessThanOrEqual(PROPAGATION_GOAL_MS);
  });

  it('lists and reads what it made', async () => {
    const t = await house();
    // A 201 says where the new resource is read (Location), and reading it there gives what the 201 gave.
    const made = await admin('POST', '/api/admin/workspaces', { organisation_id: t.organisationId, name: 'Second' });
    expect(made.headers.get('location')).toBe(`/api/admin/workspaces/${(made.body as { id: string }).id}`);
    expect((await admin('GET', made.headers.get('location')!)).body).toEqual(made.body);
    const organisation = await admin('GET', `/api/admin/organisations/${t.organisationId}`);
    expect(organisation.body).toMatchObject({ id: t.organisationId, kind: 'house', quota: { tier: 'high' } });
    const workspaces = await admin('GET', `/api/admin/workspaces?organisation_id=${t.organisationId}`);
    // A workspace made without a quota gets its organisation's.
    expect(workspaces.body).toEqual({
      workspaces: [
        expect.objectContaining({ id: t.workspaceId, quota: expect.objectContaining({ tier: 'high' }) }),
        expect.objectContaining({ id: (made.body as { id: string }).id }),
      ],
      next_after: null,
    });
    const apps = await admin('GET', `/api/admin/apps?workspace_id=${t.workspaceId}`);
    expect(apps.body).toEqual({ apps: [expect.objectContaining({ id: t.appId })], next_after: null });
    // Every organisation of the deployment, page after page: the newest, this one, on the last.
    const organisations: Array<{ id: string }> = [];
    for (let after: string | null = '', pages = 0; after !== null; pages += 1) {
      expect(pages).toBeLessThan(100);
      const page = (await admin('GET', `/api/admin/organisations?limit=5${after ? `&after=${after}` : ''}`)).body as {
        organisations: Array<{ id: string }>;
        next_after: string | null;
      };
      expect(page.organisations.length).toBeLessThanOrEqual(5);
      organisations.push(...page.organisations);
      after = page.next_after;
    }
    expect(organisations.at(-1)).toMatchObject({ id: t.organisationId });
    expect(new Set(organisations.map((o) => o.id)).size).toBe(organisations.length);
  });

  it('pages a list oldest first, says where the next page starts, and refuses a page it cannot give', async () => {
    const t = await house();
    const issued: Issued[] = [];
    for (let i = 0; i < 3; i += 1) issued.push(await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' }));
    const first = await admin('GET', `/api/admin/connections?app_id=${t.appId}&limit=2`);
    expect(first.body).toEqual({
      connections: issued.slice(0, 2).map((c) => expect.objectContaining({ client_id: c.client_id })),
      next_after: issued[1]!.client_id,
    });
    const last = await admin('GET', `/api/admin/connections?app_id=${t.appId}&limit=2&after=${issued[1]!.client_id}`);
    expect(last.body).toEqual({ connections: [expect.objectContaining({ client_id: issued[2]!.client_id })], next_after: null });
    // Exactly a page's worth: no next page to announce.
    expect((await admin('GET', `/api/admin/connections?app_id=${t.appId}&limit=3`)).body).toMatchObject({ next_after: null });
    for (const query of ['limit=0', 'limit=501', 'after=nope', `after=${'c'.repeat(13)}`]) {
      const refused = await admin('GET', `/api/admin/connections?app_id=${t.appId}&${query}`);
      expect([query, refused.status, (refused.body as { code: string }).code]).toEqual([query, 400, 'admin.request_invalid']);
    }
  });
});

describe('connection names and last use', () => {
  let db: Knex;
  beforeAll(() => {
    db = createDatabase({ url: bus.env.DATABASE_URL!, poolMax: 2, applicationName: 'admin-e2e' });
  });
  afterAll(async () => {
    await db?.destroy();
  });
  const lastUsed = async (clientId: string) => (await db('connections').where({ id: clientId }).first('last_used_at'))?.last_used_at ?? null;
  const forget = (clientId: string) => db('connections').where({ id: clientId }).update({ last_used_at: null });

  it('takes a name and a description at creation and by PUT …/details, and shows them with created_at and last_used_at', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', {
      app_id: t.appId,
      kind: 'producer',
      name: 'Studio publisher',
      description: 'Publishes\nthe web tellings',
    });
    expect(issued.connection).toMatchObject({
      name: 'Studio publisher',
      description: 'Publishes\nthe web tellings',
      last_used_at: null,
      created_at: expect.any(String),
    });
    const renamed = await admin('PUT', `/api/admin/connections/${issued.client_id}/details`, { name: 'Web publisher' });
    expect(renamed.status).toBe(200);
    // The body replaces both: the description left out is emptied.
    expect(renamed.body).toMatchObject({ client_id: issued.client_id, name: 'Web publisher', description: '' });
    expect((await admin('GET', `/api/admin/connections/${issued.client_id}`)).body).toMatchObject({ name: 'Web publisher', description: '' });
    const plain = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    expect(plain.connection).toMatchObject({ name: '', description: '' });
    expect((await admin('PUT', '/api/admin/connections/caaaaaaaaaaaa/details', { name: 'x' })).status).toBe(404);
  });

  it.each([
    [
      'a name with a newline',
      { name: 'two\nlines' },
      'body "name" must be one line of text without control characters (no tab, newline, NUL, line separator or bidirectional control)',
    ],
    [
      'a name with a NUL',
      { name: 'nul\u0000' },
      'body "name" must be one line of text without control characters (no tab, newline, NUL, line separator or bidirectional control)',
    ],
    ['a name over 100 characters', { name: 'n'.repeat(101) }, 'body "name" must NOT have more than 100 characters'],
    [
      'a description with a tab',
      { description: 'tab\there' },
      'body "description" must be text without control characters other than newlines (no tab, NUL or bidirectional control)',
    ],
    ['a description over 500 characters', { description: 'd'.repeat(501) }, 'body "description" must NOT have more than 500 characters'],
  ])('refuses %s with a 400 naming the field in words, at creation and by PUT', async (_what, about, message) => {
    const t = await house();
    const refused = await admin('POST', '/api/admin/connections', { app_id: t.appId, kind: 'producer', ...about });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'admin.request_invalid', message });
    expect((await admin('GET', `/api/admin/connections?app_id=${t.appId}`)).body).toEqual({ connections: [], next_after: null });
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer', name: 'Kept' });
    const put = await admin('PUT', `/api/admin/connections/${issued.client_id}/details`, about);
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ code: 'admin.request_invalid', message });
    expect((await admin('GET', `/api/admin/connections/${issued.client_id}`)).body).toMatchObject({ name: 'Kept' });
  });

  it('records a token, a publish and a receive in last_used_at, once a minute per connection and process rather than on every request', async () => {
    const t = await house();
    const connection = (kind: string) => created<Issued>('/api/admin/connections', { app_id: t.appId, kind });
    const [producer, other, consumer, otherConsumer] = [
      await connection('producer'),
      await connection('producer'),
      await connection('consumer'),
      await connection('consumer'),
    ];
    expect(await lastUsed(producer.client_id)).toBeNull();
    const recorded = (c: Issued, what: string) =>
      eventually(
        () => lastUsed(c.client_id),
        (at) => at !== null,
        { what },
      );
    // The token route writes it, after its answer.
    const bearer = await token(producer.client_id, producer.client_secret);
    const first = await recorded(producer, "the token's use recorded");
    expect(first!.getTime()).toBeGreaterThanOrEqual(Date.parse(producer.connection.created_at));
    expect((await admin('GET', `/api/admin/connections/${producer.client_id}`)).body).toMatchObject({ last_used_at: first!.toISOString() });
    /** A token of the connection, its use by the token route already recorded and then forgotten. */
    const tokenForgotten = async (c: Issued) => {
      const issued = await token(c.client_id, c.client_secret);
      await recorded(c, `${c.client_id}'s token recorded`);
      await forget(c.client_id);
      return issued;
    };
    const [otherBearer, consumerBearer, otherConsumerBearer] = [
      await tokenForgotten(other),
      await tokenForgotten(consumer),
      await tokenForgotten(otherConsumer),
    ];

    // The gateway writes it for a publish: forgotten here, it comes back with the next publish…
    await forget(producer.client_id);
    expect((await publish(t.workspaceId, bearer)).status).toBe(202);
    await recorded(producer, "the publish's use recorded");
    // …and not with the ones after it within the minute: no write per request. Another connection's
    // first publish, recorded after them, shows they had their turn.
    await forget(producer.client_id);
    for (let i = 0; i < 3; i += 1) expect((await publish(t.workspaceId, bearer)).status).toBe(202);
    expect((await publish(t.workspaceId, otherBearer)).status).toBe(202);
    await recorded(other, "the other producer's publish recorded");
    expect(await lastUsed(producer.client_id)).toBeNull();

    // The same for a receive.
    const receive = (c: Issued, bearerToken: string) =>
      busCall('GET', `/v1/tenants/${t.workspaceId}/consumers/${c.client_id}/messages?wait_seconds=0`, bearerToken);
    expect((await receive(consumer, consumerBearer)).status).toBe(200);
    await recorded(consumer, "the receive's use recorded");
    await forget(consumer.client_id);
    for (let i = 0; i < 3; i += 1) expect((await receive(consumer, consumerBearer)).status).toBe(200);
    expect((await receive(otherConsumer, otherConsumerBearer)).status).toBe(200);
    await recorded(otherConsumer, "the other consumer's receive recorded");
    expect(await lastUsed(consumer.client_id)).toBeNull();
  }, 30_000);
});

describe('refusals', () => {
  it.each([
    ['an unknown organisation', 'GET', '/api/admin/organisations/oaaaaaaaaaaaa', undefined, 404, 'admin.not_found'],
    ['an unknown connection', 'POST', '/api/admin/connections/caaaaaaaaaaaa/rotate', { overlap_seconds: 60 }, 404, 'admin.not_found'],
    ['a workspace of an unknown organisation', 'POST', '/api/admin/workspaces', { organisation_id: 'oaaaaaaaaaaaa', name: 'x' }, 404, 'admin.not_found'],
    ['an unknown field', 'POST', '/api/admin/organisations', { name: 'x', kind: 'house', tier: 'high' }, 400, 'admin.request_invalid'],
    ['an unknown kind', 'POST', '/api/admin/organisations', { name: 'x', kind: 'reseller' }, 400, 'admin.request_invalid'],
    [
      'custom limits over the ceiling',
      'POST',
      '/api/admin/organisations',
      { name: 'x', kind: 'house', quota: { tier: 'custom', per_second: 201, burst: 400, per_day: 10 } },
      400,
      'admin.request_invalid',
    ],
    [
      'a burst below the rate',
      'POST',
      '/api/admin/organisations',
      { name: 'x', kind: 'house', quota: { tier: 'custom', per_second: 50, burst: 10, per_day: 10 } },
      400,
      'admin.request_invalid',
    ],
    ['a malformed id filter', 'GET', '/api/admin/connections?workspace_id=nope', undefined, 400, 'admin.request_invalid'],
    ['a body that is not JSON', 'POST', '/api/admin/organisations', '{"name":', 400, 'admin.request_invalid'],
    ['a member name twice (I-JSON)', 'POST', '/api/admin/organisations', '{"name":"a","kind":"house","name":"b"}', 400, 'admin.request_invalid'],
    // Checked against admin.json: what the document says is what is refused.
    ['a name with a tab (no control characters)', 'POST', '/api/admin/organisations', { name: 'Tab\there', kind: 'house' }, 400, 'admin.request_invalid'],
    ['a query parameter the route does not take', 'GET', '/api/admin/organisations?page=2', undefined, 400, 'admin.request_invalid'],
    ['an id not of its form', 'GET', '/api/admin/connections/nope', undefined, 400, 'admin.request_invalid'],
  ])('%s', async (_what, method, path, body, status, code) => {
    const res = await admin(method, path, body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses permissions no message could use: a message type the bus has no schema for, a system id not of the SOM form', async () => {
    const t = await house();
    for (const permissions of [
      { system_ids: [SYSTEM_ID], message_types: ['telling.startd'] },
      { system_ids: ['Storyteller Web'], message_types: ['telling.started'] },
    ]) {
      const res = await admin('PUT', `/api/admin/apps/${t.appId}/permissions`, permissions);
      expect([res.status, res.body]).toEqual([400, expect.objectContaining({ code: 'admin.request_invalid' })]);
    }
    const app = await admin('GET', `/api/admin/apps/${t.appId}`);
    expect([...(app.body as { permissions: { message_types: string[] } }).permissions.message_types].sort()).toEqual([
      'telling.ended',
      'telling.exposed',
      'telling.started',
    ]);
  });

  it('refuses a change guarded by a precondition it cannot meet (If-Match: no entity tags are kept), changing nothing', async () => {
    const t = await house();
    const guarded = await fetchObserved(`${bus.portalUrl}/api/admin/apps/${t.appId}/permissions`, {
      method: 'PUT',
      headers: { Authorization: operatorAuth, 'Content-Type': 'application/json', 'If-Match': '"v1"' },
      body: JSON.stringify({ system_ids: [SYSTEM_ID], message_types: ['telling.ended'] }),
    });
    adminApi.check('PUT', `/api/admin/apps/${t.appId}/permissions`, guarded);
    expect([guarded.status, guarded.body]).toEqual([412, expect.objectContaining({ code: 'admin.precondition_failed' })]);
    const app = await admin('GET', `/api/admin/apps/${t.appId}`);
    expect([...(app.body as { permissions: { message_types: string[] } }).permissions.message_types].sort()).toEqual([
      'telling.ended',
      'telling.exposed',
      'telling.started',
    ]);
  });

  it('reads a JSON body only as application/json: the body a cross-site form can post as text/plain creates nothing', async () => {
    const name = `CSRF ${randomUUID()}`;
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await admin('POST', '/api/admin/organisations', { name, kind: 'vendor' }, { contentType });
      expect([res.status, res.body]).toEqual([
        400,
        expect.objectContaining({ code: 'admin.request_invalid', message: expect.stringContaining('application/json') }),
      ]);
    }
    const listed = await admin('GET', '/api/admin/organisations?limit=500');
    expect((listed.body as { organisations: Array<{ name: string }> }).organisations.filter((o) => o.name === name)).toEqual([]);
  });

  it('is no-store also when the host refuses before the admin routes run (a Content-Encoding, another method)', async () => {
    const encoded = await fetchObserved(`${bus.portalUrl}/api/admin/organisations`, {
      method: 'POST',
      headers: { Authorization: operatorAuth, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: '{}',
    });
    expect([encoded.status, encoded.headers.get('cache-control')]).toEqual([415, 'no-store']);
    const method = await fetchObserved(`${bus.portalUrl}/api/admin/organisations`, { method: 'DELETE', headers: { Authorization: operatorAuth } });
    expect([method.status, method.headers.get('cache-control')]).toEqual([405, 'no-store']);
  });

  it('answers 404 route.not_found under /api/admin to the operator, 401 to anyone else', async () => {
    const asOperator = await fetchObserved(`${bus.portalUrl}/api/admin/nothing`, { headers: { Authorization: operatorAuth } });
    expect(asOperator.status).toBe(404);
    expect(asOperator.body).toMatchObject({ code: 'route.not_found' });
    expect((await fetchObserved(`${bus.portalUrl}/api/admin/nothing`)).status).toBe(401);
  });

  it('refuses an overlap longer than 7 days', async () => {
    const t = await house();
    const issued = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const res = await admin('POST', `/api/admin/connections/${issued.client_id}/rotate`, { overlap_seconds: 7 * 86_400 + 1 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'admin.request_invalid', message: expect.stringContaining('overlap_seconds') });
  });
});

describe('skill registrations', () => {
  const valid = 'skills:\n  - skill_id: telling/pacing\n    instance_label: web pacing\n    values:\n      max_segment_ms: { web: 1200 }\n';
  const invalid =
    'skills:\n  - skill_id: telling/pacing\n    instance_label: broken\n    values:\n      max_segment_ms: fast\n  - skill_id: links/nowhere\n    instance_label: unknown\n';

  it('refuses a registration with problems with the very answer the catalogue gives, and registers nothing', async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const refused = await admin('POST', `/api/admin/connections/${consumer.client_id}/registrations`, invalid, { contentType: 'application/yaml' });
    expect(refused.status).toBe(422);
    const catalogue = await fetchObserved(`${bus.portalUrl}/api/skills/validate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/yaml' },
      body: invalid,
    });
    catalogueApi.check('POST', '/api/skills/validate', catalogue);
    expect(catalogue.status).toBe(200);
    expect((catalogue.body as { valid: boolean }).valid).toBe(false);
    expect(refused.body).toMatchObject({ code: 'registration.invalid', answer: catalogue.body });
    expect((await admin('GET', `/api/admin/connections/${consumer.client_id}/registrations`)).body).toEqual({ registrations: [] });
  });

  it("refuses 200 instances of 180 unknown keys each with the catalogue's bounded answer: 10 problems an instance and a line counting the rest", async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const keys = Object.fromEntries(Array.from({ length: 180 }, (_, k) => [String.fromCharCode(97 + Math.floor(k / 26), 97 + (k % 26)), 1]));
    const body = JSON.stringify({ skills: Array.from({ length: 200 }, () => keys) });
    const refused = await admin('POST', `/api/admin/connections/${consumer.client_id}/registrations`, body);
    expect(refused.status).toBe(422);
    const answer = (refused.body as { answer: { instances: Array<{ problems: string[] }> } }).answer;
    expect(answer.instances).toHaveLength(200);
    expect(answer.instances.every((i) => i.problems.length === 11 && i.problems[10] === 'and 172 more problems not listed')).toBe(true);
    // Well within the bound docs/skills.md states for any answer (691,000 bytes).
    expect(Buffer.byteLength(JSON.stringify(refused.body))).toBeLessThan(300_000);
    const catalogue = await fetchObserved(`${bus.portalUrl}/api/skills/validate`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(answer).toEqual(catalogue.body);
  });

  it('registers a valid file; the consumer sees it on its skills route; a label is taken once; removal works', async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const added = await admin('POST', `/api/admin/connections/${consumer.client_id}/registrations`, valid, { contentType: 'application/yaml' });
    expect(added.status).toBe(201);
    const [registration] = (added.body as { registrations: Array<{ registration_id: string }> }).registrations;
    expect(registration).toMatchObject({
      library_version: '0.2.2',
      instance: { skill_id: 'telling/pacing', instance_label: 'web pacing', values: { max_segment_ms: { web: 1200 } } },
    });

    const bearer = await token(consumer.client_id, consumer.client_secret);
    const skills = await busCall('GET', `/v1/tenants/${t.workspaceId}/consumers/${consumer.client_id}/skills`, bearer);
    expect(skills.status).toBe(200);
    expect(skills.body).toEqual({ registrations: [registration] });

    const again = await admin('POST', `/api/admin/connections/${consumer.client_id}/registrations`, valid, { contentType: 'application/yaml' });
    expect(again.status).toBe(409);
    const removed = await admin('DELETE', `/api/admin/connections/${consumer.client_id}/registrations/${registration!.registration_id}`);
    expect(removed.status).toBe(204);
    expect((await busCall('GET', `/v1/tenants/${t.workspaceId}/consumers/${consumer.client_id}/skills`, bearer)).body).toEqual({ registrations: [] });
    const gone = await admin('DELETE', `/api/admin/connections/${consumer.client_id}/registrations/${registration!.registration_id}`);
    expect(gone.status).toBe(404);
  });

  it('keeps a connection to 200 registrations, the most one skills list holds: the 201st is refused and nothing of it registered', async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const file = (labels: string[]) =>
      `skills:\n${labels.map((label) => `  - skill_id: telling/pacing\n    instance_label: ${label}\n    values:\n      max_segment_ms: { web: 1200 }\n`).join('')}`;
    const path = `/api/admin/connections/${consumer.client_id}/registrations`;
    const full = await admin('POST', path, file(Array.from({ length: 200 }, (_, i) => `pacing ${i}`)), { contentType: 'application/yaml' });
    expect(full.status).toBe(201);
    const past = await admin('POST', path, file(['pacing extra']), { contentType: 'application/yaml' });
    expect([past.status, past.body]).toEqual([
      409,
      expect.objectContaining({
        code: 'admin.conflict',
        message: 'a consumer connection holds at most 200 skill registrations: this one has 200, the request adds 1',
      }),
    ]);
    const bearer = await token(consumer.client_id, consumer.client_secret);
    const skills = await busCall('GET', `/v1/tenants/${t.workspaceId}/consumers/${consumer.client_id}/skills`, bearer);
    expect((skills.body as { registrations: unknown[] }).registrations).toHaveLength(200);
  });

  it('keeps a workspace to 1,000 connections that are not removed: the next is 409 admin.conflict until one is removed', async () => {
    const t = await house();
    const db = createDatabase({ url: bus.env.DATABASE_URL!, poolMax: 1, applicationName: 'admin-e2e-connections' });
    try {
      await TenancyFixture.create(db).connections(999, () => ({ app_id: t.appId, workspace_id: t.workspaceId, kind: 'consumer' }));
    } finally {
      await db.destroy();
    }
    const last = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const refused = await admin('POST', '/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      code: 'admin.conflict',
      message: 'a workspace holds at most 1000 connections that are not removed: remove revoked ones first',
    });
    expect((await admin('DELETE', `/api/admin/connections/${last.client_id}`)).status).toBe(204);
    await created('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
  });

  it('keeps a workspace to 100 apps and an organisation to 100 workspaces: the 101st is 409 admin.conflict', async () => {
    const t = await house();
    for (let n = 1; n < 100; n += 1) await created('/api/admin/apps', { workspace_id: t.workspaceId, name: `App ${n}` });
    const app = await admin('POST', '/api/admin/apps', { workspace_id: t.workspaceId, name: 'App 101' });
    expect(app.status).toBe(409);
    expect(app.body).toMatchObject({ code: 'admin.conflict', message: 'a workspace holds at most 100 apps' });
    const apps = await admin('GET', `/api/admin/apps?workspace_id=${t.workspaceId}&limit=100`);
    expect((apps.body as { apps: unknown[] }).apps).toHaveLength(100);
    // A page of apps holds 100 at most: each carries its permissions.
    expect((await admin('GET', `/api/admin/apps?workspace_id=${t.workspaceId}&limit=101`)).body).toMatchObject({
      code: 'admin.request_invalid',
      message: 'query parameter "limit" must be <= 100',
    });

    for (let n = 1; n < 100; n += 1) await created('/api/admin/workspaces', { organisation_id: t.organisationId, name: `Workspace ${n}` });
    const workspace = await admin('POST', '/api/admin/workspaces', { organisation_id: t.organisationId, name: 'Workspace 101' });
    expect(workspace.status).toBe(409);
    expect(workspace.body).toMatchObject({ code: 'admin.conflict', message: 'an organisation holds at most 100 workspaces' });
  }, 60_000);

  it('refuses registrations on a producer connection', async () => {
    const t = await house();
    const producer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const res = await admin('POST', `/api/admin/connections/${producer.client_id}/registrations`, valid, { contentType: 'application/yaml' });
    expect(res.status).toBe(409);
  });
});

describe('consumer tools outside a Sandbox', () => {
  it('refuses fault injection, storing nothing, but takes faults off and a dead-letter threshold', async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const faultsPath = `/api/admin/connections/${consumer.client_id}/faults`;
    const refused = await admin('PUT', faultsPath, { duplicate_rate: 0.5, delay_ms: 0, early_expiry_rate: 0 });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'admin.conflict', message: expect.stringContaining('Sandbox') });
    expect((await admin('GET', `/api/admin/connections/${consumer.client_id}`)).body).toMatchObject({ consumer_tools: null });

    const off = await admin('PUT', faultsPath, { duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 0 });
    expect(off.status).toBe(200);
    const policy = await admin('PUT', `/api/admin/connections/${consumer.client_id}/dead-letter-policy`, { max_receives: 3 });
    expect(policy.status).toBe(200);
    expect(policy.body).toMatchObject({ consumer_tools: { faults: { duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 0 }, max_receives: 3 } });
  });
});

describe('replay and queue stats', () => {
  interface Received {
    receipt_handle: string;
    message_id: string;
  }

  it("replays what the consumer acked, in order, and reports the queue's depth", async () => {
    const t = await house();
    const producer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const producerToken = await token(producer.client_id, producer.client_secret);
    const consumerToken = await token(consumer.client_id, consumer.client_secret);
    const correlationId = `c-${randomUUID()}`;
    const sent = [message('telling.started', correlationId), message('telling.exposed', correlationId), message('telling.ended', correlationId)];
    const since = new Date(Date.now() - 60_000).toISOString();
    for (const m of sent) expect((await publish(t.workspaceId, producerToken, m)).status).toBe(202);

    const messagesPath = `/v1/tenants/${t.workspaceId}/consumers/${consumer.client_id}/messages`;
    // Receive and ack one at a time (FIFO per correlation id hands out one until it is acked).
    const firstPass: string[] = [];
    for (let i = 0; i < sent.length; i++) {
      const res = await busCall('GET', `${messagesPath}?wait_seconds=10&max_messages=1`, consumerToken);
      const [m] = (res.body as { messages: Received[] }).messages;
      expect(m).toBeDefined();
      firstPass.push(m!.message_id);
      const acked = await busCall('POST', `/v1/tenants/${t.workspaceId}/consumers/${consumer.client_id}/ack`, consumerToken, {
        receipt_handles: [m!.receipt_handle],
      });
      expect(acked.status).toBe(200);
    }
    expect(firstPass).toEqual(sent.map((m) => m.message_id));
    const empty = await admin('GET', `/api/admin/connections/${consumer.client_id}/queue`);
    expect(empty.body).toEqual({ client_id: consumer.client_id, depth: 0, in_flight: 0, dead_letters: 0, oldest_age_seconds: null });

    const started = await admin('POST', `/api/admin/connections/${consumer.client_id}/replays`, { since });
    expect(started.status).toBe(202);
    const replayId = (started.body as { replay_id: string }).replay_id;
    const replay = await eventually(
      async () => (await admin('GET', `/api/admin/replays/${replayId}`)).body as { status: string; replayed: number; scanned: number },
      (r) => r.status !== 'running',
      { ...ANSWERS_CHECKED, what: 'the replay finished' },
    );
    expect(replay).toMatchObject({ status: 'succeeded', scanned: 3, replayed: 3, skipped: 0 });

    const depth = await admin('GET', `/api/admin/connections/${consumer.client_id}/queue`);
    expect(depth.body).toMatchObject({ depth: 3, in_flight: 0, oldest_age_seconds: expect.any(Number) });
    // The replayed messages come back in their order; the first is handed out alone (FIFO).
    const res = await busCall('GET', `${messagesPath}?wait_seconds=10&max_messages=10`, consumerToken);
    const again = (res.body as { messages: Received[] }).messages;
    expect(again.map((m) => m.message_id)).toEqual(sent.map((m) => m.message_id).slice(0, again.length));
    expect(again.length).toBeGreaterThan(0);
  }, 60_000);

  it('refuses a since outside the archive or in the future, and replays of producers', async () => {
    const t = await house();
    const consumer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'consumer' });
    const producer = await created<Issued>('/api/admin/connections', { app_id: t.appId, kind: 'producer' });
    const longAgo = new Date(Date.now() - 31 * 86_400_000).toISOString();
    const tooOld = await admin('POST', `/api/admin/connections/${consumer.client_id}/replays`, { since: longAgo });
    expect(tooOld.status).toBe(400);
    expect(tooOld.body).toMatchObject({ code: 'admin.request_invalid', message: expect.stringContaining('30 days') });
    const future = await admin('POST', `/api/admin/connections/${consumer.client_id}/replays`, { since: new Date(Date.now() + 3_600_000).toISOString() });
    expect(future.status).toBe(400);
    const notRfc3339 = await admin('POST', `/api/admin/connections/${consumer.client_id}/replays`, { since: '2h' });
    expect(notRfc3339.status).toBe(400);
    // No calendar date: refused as such, never rolled over into 2 March.
    const february30 = await admin('POST', `/api/admin/connections/${consumer.client_id}/replays`, { since: '2026-02-30T08:00:00Z' });
    expect(february30.body).toMatchObject({ code: 'admin.request_invalid', message: 'body "since" must match format "date-time"' });
    expect((await admin('POST', `/api/admin/connections/${producer.client_id}/replays`, { since: new Date().toISOString() })).status).toBe(409);
    expect((await admin('GET', `/api/admin/connections/${producer.client_id}/queue`)).status).toBe(409);
    expect((await admin('GET', '/api/admin/replays/paaaaaaaaaaaa')).status).toBe(404);
  });
});
