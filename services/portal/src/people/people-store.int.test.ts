import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { PeopleStore, type AuditedCollection } from './people-store';

const database = useTestDatabase({ applicationName: 'people-store-test', poolMax: 2 });
let db: Knex;
let store: PeopleStore;

const HOUSE = 'opeoplestore2';
const OTHER_HOUSE = 'opeoplestore3';
const ids = { workspaces: 'wpeoplestore2', apps: '', connections: 'cpeoplestore2', bindings: 'bpeoplestore2' };

beforeAll(async () => {
  db = database.db;
  const tenancy = database.tenancy;
  await tenancy.organisation({ id: HOUSE });
  await tenancy.organisation({ id: OTHER_HOUSE });
  await tenancy.workspace({ id: ids.workspaces, organisation_id: HOUSE });
  // The other house's workspace, app and connection share no id with the first's, so a wrong join answers it or null.
  const otherWorkspace = await tenancy.workspace({ organisation_id: OTHER_HOUSE });
  await tenancy.connection({ app_id: (await tenancy.app({ workspace_id: otherWorkspace.id })).id, kind: 'consumer' });
  ids.apps = (await tenancy.app({ workspace_id: ids.workspaces })).id;
  await tenancy.connection({ id: ids.connections, app_id: ids.apps, kind: 'consumer' });
  await db('identity_providers').insert({
    id: 'ipeoplestore2',
    issuer: 'https://idp.example.test',
    jwks_url: 'https://idp.example.test/jwks',
    audiences: ['bus'],
    algorithms: ['ES256'],
    client_claim: 'azp',
    clock_tolerance_seconds: 30,
  });
  await db('identity_bindings').insert({ id: ids.bindings, provider_id: 'ipeoplestore2', client_value: 'client-1', connection_id: ids.connections });
  store = new PeopleStore(db);
});

describe("the people store's owner of an audited target", () => {
  it.each(['workspaces', 'apps', 'connections', 'bindings'] as const)('names the house that owns a target in %s', async (collection) => {
    expect(await store.organisationOfTarget(collection, ids[collection])).toBe(HOUSE);
  });

  it('names an organisation as its own', async () => {
    expect(await store.organisationOfTarget('organisations', OTHER_HOUSE)).toBe(OTHER_HOUSE);
  });

  it.each(['organisations', 'workspaces', 'apps', 'connections', 'bindings'] satisfies AuditedCollection[])(
    'answers null for an id that is not in %s',
    async (collection) => {
      expect(await store.organisationOfTarget(collection, 'xnosuchtarget')).toBeNull();
    },
  );
});
