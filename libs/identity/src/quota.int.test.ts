import { createDatabase, migrateLatest, type Knex } from '@bus/db';
import { CUSTOM_QUOTA_CEILING, QUOTA_TIERS } from '@bus/limits';
import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { KnexQuotaStore } from './index';

let testDb: TestDatabase;
let db: Knex;

const house = 'oquotahouse22';
const vendor = 'oquotavendor2';
const workspace = 'wquotaworksp2';
const [houseApp, vendorApp] = ['aquotahouse22', 'aquotavendor2'];
const [houseConnection, vendorConnection] = ['cquotahouse22', 'cquotavendor2'];

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 2, applicationName: 'quota-test' });
  await migrateLatest(db);
  await db('organisations').insert([
    { id: house, name: 'House', kind: 'house' },
    { id: vendor, name: 'Vendor', kind: 'vendor' },
  ]);
  await db('workspaces').insert({ id: workspace, organisation_id: house, name: 'W' });
  await db('apps').insert([
    { id: houseApp, workspace_id: workspace, organisation_id: house, name: 'House app' },
    { id: vendorApp, workspace_id: workspace, organisation_id: vendor, name: 'Vendor app' },
  ]);
  await db('connections').insert([
    { id: houseConnection, app_id: houseApp, workspace_id: workspace, kind: 'consumer' },
    { id: vendorConnection, app_id: vendorApp, workspace_id: workspace, kind: 'producer' },
  ]);
}, 30_000);

afterAll(async () => {
  await db?.destroy();
  await testDb?.drop();
});

describe('KnexQuotaStore on the real Postgres (spec §8 tiers)', () => {
  it("gives a house's own connections the workspace's tier and a vendor's connections the vendor's", async () => {
    const store = KnexQuotaStore.create(db);
    // Defaults: workspaces approved before tiers are on standard, an invited vendor starts on minimal.
    expect(await store.quota(houseConnection)).toEqual(QUOTA_TIERS.standard);
    expect(await store.quota(vendorConnection)).toEqual(QUOTA_TIERS.minimal);

    await db('workspaces').where({ id: workspace }).update({ quota_tier: 'high' });
    expect(await store.quota(houseConnection)).toEqual(QUOTA_TIERS.high);
    expect(await store.quota(vendorConnection)).toEqual(QUOTA_TIERS.minimal);
  });

  it('reads custom limits as numbers, up to the ceiling of 10,000,000 a day', async () => {
    const store = KnexQuotaStore.create(db);
    await db('organisations').where({ id: vendor }).update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
    expect(await store.quota(vendorConnection)).toEqual(CUSTOM_QUOTA_CEILING);
  });

  it('fails for a connection it does not know (the routes answer 503 registry.unavailable)', async () => {
    await expect(KnexQuotaStore.create(db).quota('cunknownconn2')).rejects.toThrow(/cunknownconn2/);
  });
});
