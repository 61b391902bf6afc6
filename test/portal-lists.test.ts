import { createDatabase, type Knex } from '@bus/db';
import { TenancyFixture } from '@bus/fixtures';
import { PeopleStore } from '@bus/portal';
import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, freePort } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';

/**
 * The portal's lists that grow with the deployment, through its API and pages as a person with a
 * session (docs/portal.md "Pages and the portal API"): the operator's organisations a page at a time, and a
 * workspace's connections found by the search in Postgres, at most 500 in one answer with the counts
 * that say so. Rows are written straight into the bus's database (hundreds of them), the sessions as
 * the sign-in's callback writes them; every answer is checked against portal.json.
 */
const portalApi = createOpenApiChecker(openapi.portal);
const ORGANISATIONS = 53;
const CONNECTIONS = 505;

let bus: RunningBus;
let db: Knex;
let workspaceId: string;
const cookies = { operator: '', houseAdmin: '' };

beforeAll(async () => {
  const issuerPort = await freePort();
  bus = await startBus({
    PORTAL_OIDC_ISSUER: `http://127.0.0.1:${issuerPort}`,
    PORTAL_OIDC_CLIENT_ID: 'bus-portal',
    PORTAL_OIDC_CLIENT_SECRET: 'portal-lists-client-secret-not-used',
    PORTAL_OIDC_REDIRECT_URL: 'http://127.0.0.1/portal/callback',
  });
  db = createDatabase({ url: bus.env.DATABASE_URL!, poolMax: 2, applicationName: 'portal-lists-test' });
  const tenancy = TenancyFixture.create(db);
  const house = await tenancy.organisation({ name: 'House', kind: 'house' });
  for (let n = 1; n < ORGANISATIONS; n += 1) await tenancy.organisation({ name: `Organisation ${n}`, kind: 'house' });
  workspaceId = (await tenancy.workspace({ organisation_id: house.id, name: 'Stories' })).id;
  const feeds = await tenancy.app({ workspace_id: workspaceId, name: 'Feeds' });
  const readers = await tenancy.app({ workspace_id: workspaceId, name: 'Readers' });
  for (let n = 0; n < CONNECTIONS; n += 1) {
    await tenancy.connection({
      app_id: n % 2 === 0 ? feeds.id : readers.id,
      kind: 'consumer',
      name: `Feed ${n}`,
      ...(n === 7 ? { description: 'Needle 100%_sure' } : {}),
    });
  }
  await tenancy.connection({ app_id: feeds.id, kind: 'producer', name: 'Gone', status: 'removed' });
  const people = new PeopleStore(db);
  const cookieFor = async (grants: Array<{ role: 'operator' } | { role: 'house_admin'; organisationId: string }>) =>
    (await people.createSession({ subject: `person-${grants[0]!.role}`, name: 'Person', grants }, 3_600_000)).cookie;
  cookies.operator = await cookieFor([{ role: 'operator' }]);
  cookies.houseAdmin = await cookieFor([{ role: 'house_admin', organisationId: house.id }]);
}, 180_000);

afterAll(async () => {
  await db?.destroy();
  await bus?.stop();
}, 30_000);

async function portalGet(route: string, as: keyof typeof cookies = 'operator') {
  const res = await fetchObserved(`${bus.portalUrl}${route}`, { headers: { Cookie: `bus_portal_session=${cookies[as]}` } });
  if (route.startsWith('/api/')) portalApi.check('GET', route, res);
  return res;
}

type OrganisationsBody = { organisations: Array<{ id: string; workspaces: Array<{ id: string }> }>; next_after: string | null };
type WorkspaceBody = {
  apps: Array<{ name: string; connections: Array<{ client_id: string; status: string }> }>;
  connection_counts: { all: number; matching: number };
};

describe("the operator's organisations", () => {
  it('come a page at a time, oldest first, each with its workspaces; the pages together are every organisation once', async () => {
    const first = (await portalGet('/api/portal/organisations')).body as OrganisationsBody;
    expect(first.organisations).toHaveLength(50);
    expect(first.next_after).toBe(first.organisations[49]!.id);
    expect(first.organisations[0]!.workspaces.map((w) => w.id)).toContain(workspaceId);
    const ids: string[] = [];
    let after: string | null = null;
    do {
      const res = await portalGet(`/api/portal/organisations?limit=20${after === null ? '' : `&after=${after}`}`);
      expect(res.status).toBe(200);
      const page = res.body as OrganisationsBody;
      ids.push(...page.organisations.map((o) => o.id));
      after = page.next_after;
    } while (after !== null);
    const all = await db('organisations').orderBy('created_at').orderBy('id').pluck('id');
    expect(ids).toEqual(all);
  });

  it('refuses a page it cannot give with 400 admin.request_invalid naming the parameter', async () => {
    for (const [query, message] of [
      ['after=ozzzzzzzzzzzz', 'after: no organisation of yours has the id ozzzzzzzzzzzz'],
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['after=not-an-id', 'after'],
    ] as const) {
      const res = await portalGet(`/api/portal/organisations?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body).toMatchObject({ code: 'admin.request_invalid', message: expect.stringContaining(message) });
    }
  });

  it('link the page to the next one, and a house admin sees only their own on one page', async () => {
    const html = (await portalGet('/portal')).body as string;
    const next = /<a href="\/portal\?after=(o[a-z2-7]{12})" rel="next">Next organisations<\/a>/.exec(html);
    expect(next).not.toBeNull();
    const second = (await portalGet(`/portal?after=${next![1]}`)).body as string;
    expect(second.match(/<h2 id="org-/g)).toHaveLength(ORGANISATIONS - 50);
    expect(second).not.toContain('Next organisations');

    const own = (await portalGet('/api/portal/organisations', 'houseAdmin')).body as OrganisationsBody;
    expect(own.organisations.map((o) => o.workspaces.map((w) => w.id))).toEqual([[workspaceId]]);
    expect(own.next_after).toBeNull();
  });
});

describe("a workspace's connections", () => {
  it('list at most 500, oldest first, with the counts that say more were found', async () => {
    const body = (await portalGet(`/api/portal/workspaces/${workspaceId}`)).body as WorkspaceBody;
    const listed = body.apps.flatMap((a) => a.connections.map((c) => c.client_id));
    const oldest = await db('connections')
      .where({ workspace_id: workspaceId })
      .whereNot({ status: 'removed' })
      .orderBy('created_at')
      .orderBy('id')
      .limit(500)
      .pluck('id');
    expect(listed.sort()).toEqual([...oldest].sort());
    expect(body.connection_counts).toEqual({ all: CONNECTIONS + 1, matching: CONNECTIONS });
    const html = (await portalGet(`/portal/workspaces/${workspaceId}`)).body as string;
    expect(html).toContain(`Showing the first 500 of ${CONNECTIONS} connections found (of ${CONNECTIONS + 1}); narrow the search to see the others.`);
  });

  it('are found by the search in Postgres, as typed (% and _ too), case-insensitive; removed ones only when asked', async () => {
    const found = (await portalGet(`/api/portal/workspaces/${workspaceId}?q=${encodeURIComponent('NEEDLE 100%_')}`)).body as WorkspaceBody;
    expect(found.apps.flatMap((a) => a.connections)).toHaveLength(1);
    expect(found.connection_counts).toEqual({ all: CONNECTIONS + 1, matching: 1 });
    // `%` and `_` are no wildcards: nothing else has them.
    expect(((await portalGet(`/api/portal/workspaces/${workspaceId}?q=%25`)).body as WorkspaceBody).connection_counts.matching).toBe(1);
    // The app's name finds its connections.
    const readers = (await portalGet(`/api/portal/workspaces/${workspaceId}?q=readers`)).body as WorkspaceBody;
    expect(readers.connection_counts.matching).toBe(Math.floor(CONNECTIONS / 2));

    const hidden = (await portalGet(`/api/portal/workspaces/${workspaceId}?q=gone`)).body as WorkspaceBody;
    expect(hidden.connection_counts.matching).toBe(0);
    const shown = (await portalGet(`/api/portal/workspaces/${workspaceId}?q=gone&removed=true`)).body as WorkspaceBody;
    expect(shown.apps.flatMap((a) => a.connections).map((c) => c.status)).toEqual(['removed']);
    const page = (await portalGet(`/portal/workspaces/${workspaceId}?q=gone&removed=1`)).body as string;
    expect(page).toContain(`Showing 1 of ${CONNECTIONS + 1} connections.`);
  });

  it('refuses a search of more than 100 characters or with a control character, and a removed that is no boolean', async () => {
    for (const query of [`q=${'x'.repeat(101)}`, 'q=%01', 'removed=1', 'removed=yes']) {
      const res = await portalGet(`/api/portal/workspaces/${workspaceId}?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.body).toMatchObject({ code: 'admin.request_invalid' });
    }
  });
});
