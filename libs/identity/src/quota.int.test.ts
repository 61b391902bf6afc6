import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { CUSTOM_QUOTA_CEILING, QUOTA_TIERS } from '@bus/limits';
import { KnexQuotaStore } from './index';

const database = useTestDatabase({ applicationName: 'quota-test', poolMax: 2 });
let db: Knex;

// A house's workspace with its own consumer, and a vendor's app with a producer in the same workspace.
let vendor: string;
let workspace: string;
let houseConnection: string;
let vendorConnection: string;

beforeAll(async () => {
  db = database.db;
  const tenancy = database.tenancy;
  const house = await tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  workspace = house.workspaceId;
  houseConnection = house.connectionIds[0]!;
  vendor = (await tenancy.organisation({ name: 'Vendor', kind: 'vendor' })).id;
  const vendorApp = await tenancy.app({ workspace_id: workspace, organisation_id: vendor, name: 'Vendor app' });
  vendorConnection = (await tenancy.connection({ app_id: vendorApp.id, kind: 'producer' })).id;
}, 30_000);

describe('KnexQuotaStore on the real Postgres (docs/api.md#limits tiers)', () => {
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
