import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, migrateDownAll, migrateLatest, type Knex } from './index';

const TABLES = [
  'accepted_messages',
  'activity_minutes',
  'apps',
  'audit_log',
  'aws_principals',
  'connections',
  'consumer_fault_events',
  'consumer_tools',
  'credentials',
  'dead_letters',
  'deliveries',
  'identity_bindings',
  'identity_providers',
  'messages',
  'organisations',
  'permissions',
  'portal_logins',
  'portal_sessions',
  'quarantined_records',
  'refusal_counters',
  'refusals',
  'replay_jobs',
  'run_validations',
  'signing_keys',
  'skill_registrations',
  'story_state',
  'test_runs',
  'workspaces',
];
const ALL = [
  '001_tenancy',
  '002_signing_keys',
  '003_publish',
  '004_delivery',
  '005_admin',
  '006_message_traceparent',
  '007_quarantine_listing',
  '008_retention',
  '009_tester_tools',
  '010_aws_principals',
  '011_identity_providers',
  '012_consumer_tools',
  '013_portal_people',
  '014_hot_leases',
  '015_pending_by_age',
  '016_accepted_body_digest',
  '017_message_body_lz4',
  '018_drop_duplicate_story_index',
  '019_refusal_violations_omitted',
  '020_delivery_heads',
  '021_drop_pending_by_age',
  '022_test_runs',
  '023_run_validations',
  '024_connection_names',
  '025_activity_minutes',
  '026_delivery_purged_at',
  '027_delivery_message_index',
  '028_deliveries_without_foreign_keys',
  '029_drop_deliveries_enqueued_at',
  '030_bindings_by_provider',
  '031_dead_letters_out_of_heads',
];

// By hand rather than @bus/fixtures' useTestDatabase: the migrations themselves are under test (up
// from an empty database, down, up again).
let testDb: TestDatabase;
let db: Knex;

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 2, applicationName: 'db-test' });
});
afterAll(async () => {
  await db.destroy();
  await testDb.drop();
});

async function tables(): Promise<string[]> {
  const rows = await db('pg_tables').where({ schemaname: 'public' }).whereNot('tablename', 'like', 'knex_%').pluck('tablename');
  return (rows as string[]).sort();
}

describe('migrations on the real Postgres', () => {
  it('run up to the tenancy schema, are idempotent, and run all the way down', async () => {
    expect(await migrateLatest(db)).toEqual(ALL);
    expect(await tables()).toEqual(TABLES);
    expect(await migrateLatest(db)).toEqual([]);

    expect(await migrateDownAll(db)).toEqual([...ALL].reverse());
    expect(await tables()).toEqual([]);
    const types = await db('pg_type').whereIn('typname', ['quota_tier', 'connection_kind', 'delivery_state']).pluck('typname');
    expect(types).toEqual([]);

    expect(await migrateLatest(db)).toEqual(ALL);
  });

  it('leaves no table with two indexes on the same keys (each is written on every insert)', async () => {
    await migrateLatest(db);
    const { rows } = await db.raw(
      `SELECT indrelid::regclass::text AS "table", array_agg(indexrelid::regclass::text ORDER BY indexrelid::regclass::text) AS indexes
         FROM pg_index JOIN pg_class t ON t.oid = indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = 'public'
        GROUP BY indrelid, indkey::text, coalesce(pg_get_expr(indexprs, indrelid), ''), coalesce(pg_get_expr(indpred, indrelid), ''), indclass::text
       HAVING count(*) > 1`,
    );
    expect(rows).toEqual([]);
  });

  it('stores new message bodies with lz4 where this Postgres has it (pglz otherwise), and reads them back byte for byte', async () => {
    const { rows: settings } = await db.raw("SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'");
    const { rows: column } = await db.raw("SELECT attcompression AS method FROM pg_attribute WHERE attrelid = 'messages'::regclass AND attname = 'body'");
    expect(column[0].method).toBe(settings[0].lz4 ? 'l' : '');
    await db('organisations').insert({ id: 'olz4lz4lz4lz2', name: 'House', kind: 'house' });
    await db('workspaces').insert({ id: 'wlz4lz4lz4lz2', organisation_id: 'olz4lz4lz4lz2', name: 'Sandbox' });
    // Over Postgres' compression threshold, like a 2 KB SOM message.
    const body = Buffer.from(JSON.stringify({ text: 'once upon a time '.repeat(200) }));
    const row = {
      workspace_id: 'wlz4lz4lz4lz2',
      message_type: 'story.context',
      correlation_id: 'c',
      published_at: new Date(),
      kafka_partition: 0,
      kafka_offset: 1,
    };
    await db('messages').insert({ ...row, message_id: 'm1', body });
    const { rows: stored } = await db.raw("SELECT pg_column_compression(body) AS method, body FROM messages WHERE message_id = 'm1'");
    expect(stored[0].method).toBe(settings[0].lz4 ? 'lz4' : 'pglz');
    expect(Buffer.compare(stored[0].body, body)).toBe(0);
    await db('workspaces').where({ id: 'wlz4lz4lz4lz2' }).delete();
    await db('organisations').where({ id: 'olz4lz4lz4lz2' }).delete();
  });
});

describe('tenancy constraints', () => {
  const org = { id: 'oabcdefghijk2', name: 'House', kind: 'house' as const };
  const vendor = { id: 'ovendorvendo7', name: 'Vendor', kind: 'vendor' as const };
  const workspace = { id: 'wabcdefghijk2', organisation_id: org.id, name: 'Sandbox' };
  const app = { id: 'aabcdefghijk2', workspace_id: workspace.id, organisation_id: vendor.id, name: 'Story app' };

  beforeAll(async () => {
    await migrateLatest(db);
    await db('organisations').insert([org, vendor]);
    await db('workspaces').insert(workspace);
    await db('apps').insert(app);
  });

  it('puts new workspaces on standard and new organisations on minimal (docs/api.md#limits)', async () => {
    expect(await db('workspaces').where({ id: workspace.id }).first('quota_tier')).toEqual({ quota_tier: 'standard' });
    expect(await db('organisations').where({ id: vendor.id }).first('quota_tier')).toEqual({ quota_tier: 'minimal' });
  });

  it('accepts custom limits up to 200/s, bursts of 400 and 10,000,000 a day, and nothing above', async () => {
    const atCeiling = { quota_tier: 'custom' as const, custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 };
    await db('workspaces').where({ id: workspace.id }).update(atCeiling);
    for (const over of [{ custom_per_second: 201 }, { custom_burst: 401 }, { custom_per_day: 10_000_001 }]) {
      await expect(
        db('workspaces')
          .where({ id: workspace.id })
          .update({ ...atCeiling, ...over }),
      ).rejects.toThrow(/workspaces_custom_limits/);
    }
    await expect(db('workspaces').where({ id: workspace.id }).update({ quota_tier: 'high' })).rejects.toThrow(/workspaces_custom_limits/);
    await db('workspaces').where({ id: workspace.id }).update({ quota_tier: 'high', custom_per_second: null, custom_burst: null, custom_per_day: null });
  });

  it('holds connection ids to c + 12 characters of [a-z2-7] (docs/api.md#connections-and-credentials)', async () => {
    const base = { app_id: app.id, workspace_id: workspace.id, kind: 'producer' as const };
    await db('connections').insert({ ...base, id: 'cabcdefghijk2' });
    for (const id of ['cabcdefghijk1', 'Cabcdefghijk2', 'cabcdefghijk', 'cabcdefghijk23', 'xabcdefghijk2']) {
      await expect(db('connections').insert({ ...base, id })).rejects.toThrow(/connections_id_format/);
    }
    expect(await db('connections').where({ id: 'cabcdefghijk2' }).first('status', 'credential_version')).toEqual({
      status: 'active',
      credential_version: 1,
    });
  });

  it('gives connections an empty name and description and no last use, and bounds the texts whatever writes them (migration 024)', async () => {
    expect(await db('connections').where({ id: 'cabcdefghijk2' }).first('name', 'description', 'last_used_at')).toEqual({
      name: '',
      description: '',
      last_used_at: null,
    });
    const row = db('connections').where({ id: 'cabcdefghijk2' });
    await row.clone().update({ name: 'n'.repeat(100), description: `${'d'.repeat(250)}\n${'d'.repeat(249)}` });
    for (const bad of [
      { name: 'n'.repeat(101) },
      { name: 'two\nlines' },
      { name: 'tab\there' },
      { description: 'd'.repeat(501) },
      { description: 'tab\there' },
      { description: 'c1\u0085' },
    ]) {
      await expect(row.clone().update(bad)).rejects.toThrow(/connections_(name|description)_text/);
    }
  });

  it('keeps one credential row per version and refuses an unknown permission kind', async () => {
    await db('credentials').insert({ connection_id: 'cabcdefghijk2', version: 1, secret_hash: 'h1' });
    await expect(db('credentials').insert({ connection_id: 'cabcdefghijk2', version: 1, secret_hash: 'h2' })).rejects.toThrow(/duplicate key/);
    // Raw SQL: the row types refuse the unknown kind before Postgres could.
    await expect(db.raw(`INSERT INTO permissions (app_id, kind, value) VALUES (?, 'topic', 'x')`, [app.id])).rejects.toThrow(
      /invalid input value for enum permission_kind/,
    );
  });
});

describe('deliveries (migration 014)', () => {
  const ids = { org: 'odelivery2345', workspace: 'wdelivery2345', app: 'adelivery2345', consumer: 'cdelivery2345' };

  beforeAll(async () => {
    await migrateLatest(db);
    await db('organisations').insert({ id: ids.org, name: 'House', kind: 'house' });
    await db('workspaces').insert({ id: ids.workspace, organisation_id: ids.org, name: 'Deliveries' });
    await db('apps').insert({ id: ids.app, workspace_id: ids.workspace, organisation_id: ids.org, name: 'Consumer app' });
    await db('connections').insert({ id: ids.consumer, app_id: ids.app, workspace_id: ids.workspace, kind: 'consumer' });
  });

  /** A queued delivery of a new message, inside `tx`. */
  async function queued(tx: Knex.Transaction, messageId: string): Promise<string> {
    await tx('messages').insert({
      workspace_id: ids.workspace,
      message_id: messageId,
      body: Buffer.from('{}'),
      message_type: 'story.context',
      correlation_id: 'corr-1',
      published_at: new Date(),
      kafka_partition: 0,
      kafka_offset: 1,
    });
    const [row] = await tx('deliveries')
      .insert({ consumer_id: ids.consumer, workspace_id: ids.workspace, message_id: messageId, correlation_id: 'corr-1' })
      .returning('id');
    return String(row!.id);
  }

  /** This transaction's updates of deliveries so far: all of them, and those that wrote no index entry (HOT). */
  async function updates(tx: Knex.Transaction): Promise<{ all: number; hot: number }> {
    const { rows } = await tx.raw<{ rows: Array<{ all: string; hot: string }> }>(
      `SELECT pg_stat_get_xact_tuples_updated('deliveries'::regclass) AS all, pg_stat_get_xact_tuples_hot_updated('deliveries'::regclass) AS hot`,
    );
    return { all: Number(rows[0]!.all), hot: Number(rows[0]!.hot) };
  }

  it('changes no indexed column on a lease, an extension or a nack (HOT updates); only the ack writes index entries', async () => {
    const tx = await db.transaction();
    try {
      const id = await queued(tx, 'm-hot-1');
      const step = async (set: string): Promise<{ all: number; hot: number }> => {
        const before = await updates(tx);
        await tx.raw(`UPDATE deliveries d SET ${set} WHERE id = ?`, [id]);
        const after = await updates(tx);
        return { all: after.all - before.all, hot: after.hot - before.hot };
      };
      // The columns each of the queue store's statements sets (libs/queue queue-store.ts).
      expect(
        await step(`state = 'leased', visible_at = now() + interval '30 s', lease_generation = d.lease_generation + 1, receive_count = d.receive_count + 1`),
      ).toEqual({ all: 1, hot: 1 });
      expect(await step(`visible_at = now() + interval '60 s'`)).toEqual({ all: 1, hot: 1 });
      expect(
        await step(`state = 'queued', lease_generation = d.lease_generation + 1, visible_at = now(), nack_count = d.nack_count + 1, last_nacked_at = now()`),
      ).toEqual({
        all: 1,
        hot: 1,
      });
      expect(await step(`state = 'acked', acked_at = now()`)).toEqual({ all: 1, hot: 0 });
    } finally {
      await tx.rollback();
    }
  });

  it('holds acked_at to the acked state, in both directions', async () => {
    const id = await db.transaction((tx) => queued(tx, 'm-check-1'));
    await expect(db('deliveries').where({ id }).update({ state: 'acked' })).rejects.toThrow(/deliveries_acked_at_with_state/);
    await expect(db('deliveries').where({ id }).update({ acked_at: new Date() })).rejects.toThrow(/deliveries_acked_at_with_state/);
    await db('deliveries').where({ id }).update({ state: 'acked', acked_at: new Date() });
    await expect(db('deliveries').where({ id }).update({ state: 'queued' })).rejects.toThrow(/deliveries_acked_at_with_state/);
  });
});
