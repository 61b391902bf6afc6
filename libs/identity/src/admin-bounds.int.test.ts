import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import { DEFAULT_CLOCK_TOLERANCE_SECONDS, DEFAULT_EXTERNAL_ALGORITHMS, type ExternalIssuer } from '@bus/tokens';
import {
  APPS_PER_WORKSPACE_MAX,
  BINDINGS_PER_CONNECTION_MAX,
  CONNECTIONS_PER_WORKSPACE_MAX,
  IdentityAdmin,
  OTHER_WORKSPACES_PER_ORGANISATION_MAX,
  TenancyFullError,
  WORKSPACES_PER_ORGANISATION_MAX,
  KnexProviderStore,
  ProviderConflictError,
  PROVIDERS_MAX,
  type ControlEvent,
} from './index';

/**
 * IdentityAdmin's bounds on the real Postgres: a deployment registers at most PROVIDERS_MAX providers,
 * a connection holds at most BINDINGS_PER_CONNECTION_MAX bindings, an organisation
 * WORKSPACES_PER_ORGANISATION_MAX workspaces, a workspace APPS_PER_WORKSPACE_MAX apps and
 * CONNECTIONS_PER_WORKSPACE_MAX connections that are not removed, and a vendor apps in
 * OTHER_WORKSPACES_PER_ORGANISATION_MAX workspaces of others — each checked
 * so that requests at once cannot pass it together — and a provider's bindings are read a page at a time.
 */

const database = useTestDatabase({ applicationName: 'providers-test', poolMax: 4 });
const announced: ControlEvent[] = [];
/** Requests at once into the last place: as many as the pool has connections. */
const RACERS = [0, 1, 2, 3];
const admin = () => IdentityAdmin.create({ db: database.db, control: { publish: async (e) => void announced.push(e) }, logger: pino({ level: 'silent' }) });

function issuer(n: number): ExternalIssuer {
  return {
    issuer: `https://login-${n}.example.com/`,
    jwksUrl: `https://login-${n}.example.com/jwks`,
    audiences: ['bus'],
    algorithms: DEFAULT_EXTERNAL_ALGORITHMS,
    clientClaim: 'azp',
    clockToleranceSeconds: DEFAULT_CLOCK_TOLERANCE_SECONDS,
  };
}

it('registers providers up to the bound, of several at once into the last place only one, and has room again after a removal', async () => {
  const identity = admin();
  const ids: string[] = [];
  for (let n = 0; n < PROVIDERS_MAX - 1; n += 1) ids.push(await identity.createProvider(issuer(n)));
  const outcomes = await database.atOnce(RACERS.map((n) => () => identity.createProvider(issuer(1_000 + n))));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: expect.any(ProviderConflictError) });
  expect(await KnexProviderStore.create(database.db).providers()).toHaveLength(PROVIDERS_MAX);
  // An issuer none of the racers used: whichever of them won, this one is new.
  const latecomer = issuer(2_000);
  await expect(identity.createProvider(latecomer)).rejects.toThrow(`a deployment registers at most ${PROVIDERS_MAX} identity providers: remove one first`);

  await identity.removeProvider(ids[0]!);
  await expect(identity.createProvider(latecomer)).resolves.toMatch(/^i[a-z2-7]{12}$/);
  // Only what was registered was announced.
  expect(announced.filter((e) => e.type === 'provider.changed')).toHaveLength(PROVIDERS_MAX + 2);
});

it("binds a connection up to the bound, of several at once into the last place only one, and lists a provider's bindings a page at a time", async () => {
  await database.db('identity_providers').delete();
  const identity = admin();
  const store = KnexProviderStore.create(database.db);
  const [full, other] = (await database.tenancy.tenant({ connections: [{ kind: 'producer' }, { kind: 'producer' }] })).connectionIds as [string, string];
  const providerId = await identity.createProvider(issuer(0));
  const bind = (client: string, connectionId = full) => identity.createBinding({ providerId, client, connectionId });
  for (let n = 0; n < BINDINGS_PER_CONNECTION_MAX - 1; n += 1) await bind(`client-${n}`);
  const outcomes = await database.atOnce(RACERS.map((n) => () => bind(`racer-${n}`)));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  await expect(bind('one-too-many')).rejects.toThrow(`a connection holds at most ${BINDINGS_PER_CONNECTION_MAX} identity provider bindings: remove one first`);
  // The bound is per connection: another connection binds the provider's other clients.
  await bind('elsewhere', other);
  expect(await store.connectionBindings(full)).toHaveLength(BINDINGS_PER_CONNECTION_MAX);

  const all = await store.bindings(providerId);
  expect(all).toHaveLength(BINDINGS_PER_CONNECTION_MAX + 1);
  const paged = [];
  let page = await store.bindings(providerId, { limit: 4 });
  while (page.length > 0) {
    paged.push(...page);
    page = await store.bindings(providerId, { limit: 4, after: page[page.length - 1]!.id });
  }
  expect(paged.map((b) => b.id)).toEqual(all.map((b) => b.id));
  expect(await store.bindingById(providerId, all[0]!.id)).toEqual(all[0]);
});

it('creates workspaces and apps up to their bounds, of several at once into the last place only one', async () => {
  const identity = admin();
  const organisationId = await identity.createOrganisation({ name: 'House', kind: 'house' });
  const workspaces: string[] = [];
  for (let n = 0; n < WORKSPACES_PER_ORGANISATION_MAX - 1; n += 1) workspaces.push(await identity.createWorkspace({ organisationId, name: `W${n}` }));
  const outcomes = await database.atOnce(RACERS.map((n) => () => identity.createWorkspace({ organisationId, name: `racer ${n}` })));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: expect.any(TenancyFullError) });
  await expect(identity.createWorkspace({ organisationId, name: 'one too many' })).rejects.toThrow(
    `an organisation holds at most ${WORKSPACES_PER_ORGANISATION_MAX} workspaces`,
  );
  expect(await database.db('workspaces').where({ organisation_id: organisationId }).count({ n: '*' })).toEqual([
    { n: String(WORKSPACES_PER_ORGANISATION_MAX) },
  ]);

  const workspaceId = workspaces[0]!;
  for (let n = 0; n < APPS_PER_WORKSPACE_MAX - 1; n += 1) await identity.createApp({ workspaceId, name: `A${n}` });
  const apps = await database.atOnce(RACERS.map((n) => () => identity.createApp({ workspaceId, name: `racer ${n}` })));
  expect(apps.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  await expect(identity.createApp({ workspaceId, name: 'one too many' })).rejects.toThrow(`a workspace holds at most ${APPS_PER_WORKSPACE_MAX} apps`);
  // The bound is per workspace: the next one has room.
  await expect(identity.createApp({ workspaceId: workspaces[1]!, name: 'elsewhere' })).resolves.toMatch(/^a[a-z2-7]{12}$/);
});

it("gives a vendor apps in other organisations' workspaces up to the bound, of several at once into the last place only one", async () => {
  const identity = admin();
  const vendor = await identity.createOrganisation({ name: 'Vendor', kind: 'vendor' });
  const workspaces: string[] = [];
  for (let n = 0; n < OTHER_WORKSPACES_PER_ORGANISATION_MAX + RACERS.length; n += 1) {
    const house = await identity.createOrganisation({ name: `House ${n}`, kind: 'house' });
    workspaces.push(await identity.createWorkspace({ organisationId: house, name: 'Stories' }));
  }
  for (const workspaceId of workspaces.slice(0, OTHER_WORKSPACES_PER_ORGANISATION_MAX - 1))
    await identity.createApp({ workspaceId, organisationId: vendor, name: 'Widget' });
  const racers = workspaces.slice(OTHER_WORKSPACES_PER_ORGANISATION_MAX);
  const outcomes = await database.atOnce(racers.map((workspaceId) => () => identity.createApp({ workspaceId, organisationId: vendor, name: 'Widget' })));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  await expect(
    identity.createApp({ workspaceId: workspaces[OTHER_WORKSPACES_PER_ORGANISATION_MAX - 1]!, organisationId: vendor, name: 'Widget' }),
  ).rejects.toThrow(`an organisation has apps in at most ${OTHER_WORKSPACES_PER_ORGANISATION_MAX} workspaces of other organisations`);
  // Another app in a workspace it is in already, and one in a workspace of its own, are no new workspace of others.
  await expect(identity.createApp({ workspaceId: workspaces[0]!, organisationId: vendor, name: 'Second widget' })).resolves.toMatch(/^a/);
  const own = await identity.createWorkspace({ organisationId: vendor, name: 'Own' });
  await expect(identity.createApp({ workspaceId: own, name: 'Own widget' })).resolves.toMatch(/^a/);
});

it('refuses an app in a workspace for another organisation that is not a vendor (a house owns apps in its own workspaces only)', async () => {
  const identity = admin();
  const house = await identity.createOrganisation({ name: 'House', kind: 'house' });
  const otherHouse = await identity.createOrganisation({ name: 'Other house', kind: 'house' });
  const workspaceId = await identity.createWorkspace({ organisationId: house, name: 'Stories' });
  await expect(identity.createApp({ workspaceId, organisationId: otherHouse, name: 'Not theirs' })).rejects.toMatchObject({
    name: 'AppOwnerNotVendorError',
    kind: 'invalid',
  });
  await expect(identity.createApp({ workspaceId, organisationId: house, name: 'Their own' })).resolves.toMatch(/^a/);
});

it('creates connections up to the bound, removed ones not counted, of several at once into the last place only one', async () => {
  const identity = admin();
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'producer' }] });
  const [first] = tenant.connectionIds as [string];
  // Removed connections stay, and take no place.
  await database.tenancy.connections(CONNECTIONS_PER_WORKSPACE_MAX + 5, (n) => ({
    app_id: tenant.appId,
    workspace_id: tenant.workspaceId,
    kind: 'consumer',
    status: n < CONNECTIONS_PER_WORKSPACE_MAX - 2 ? 'active' : 'removed',
  }));
  const outcomes = await database.atOnce(RACERS.map(() => () => identity.createConnection({ appId: tenant.appId, kind: 'consumer' })));
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: expect.any(TenancyFullError) });
  await expect(identity.createConnection({ appId: tenant.appId, kind: 'producer' })).rejects.toThrow(
    `a workspace holds at most ${CONNECTIONS_PER_WORKSPACE_MAX} connections that are not removed: remove revoked ones first`,
  );
  // A revoked one still counts; once removed, its place is free.
  await identity.revokeConnection(first);
  await expect(identity.createConnection({ appId: tenant.appId, kind: 'producer' })).rejects.toBeInstanceOf(TenancyFullError);
  await identity.removeConnection(first);
  await expect(identity.createConnection({ appId: tenant.appId, kind: 'producer' })).resolves.toMatchObject({ credentialVersion: 1 });
});
