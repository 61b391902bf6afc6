import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { REGISTRATIONS_PER_CONSUMER_MAX } from '@bus/db';
import { KnexAdminStore, RegistrationLabelTakenError, RegistrationsFullError, REPLAY_STALE_MS } from './admin-store';

const database = useTestDatabase({ applicationName: 'admin-store-test', poolMax: 4 });
let db: Knex;
let store: KnexAdminStore;
const consumerId = 'cadminstore22';
let appId: string;

beforeAll(async () => {
  db = database.db;
  const tenancy = database.tenancy;
  await tenancy.organisation({ id: 'oadminstore22' });
  await tenancy.workspace({
    id: 'wadminstore22',
    organisation_id: 'oadminstore22',
    quota_tier: 'custom',
    custom_per_second: 5,
    custom_burst: 9,
    custom_per_day: 1234,
  });
  const app = await tenancy.app({ workspace_id: 'wadminstore22' });
  appId = app.id;
  await tenancy.connection({ id: consumerId, app_id: app.id, kind: 'consumer' });
  store = KnexAdminStore.create(db);
});

describe('the admin store on the real Postgres', () => {
  it('shows a named tier with its allowance and custom limits as stored', async () => {
    expect((await store.organisation('oadminstore22'))?.quota).toEqual({ tier: 'minimal', per_second: 10, burst: 20, per_day: 25_000 });
    expect((await store.workspace('wadminstore22'))?.quota).toEqual({ tier: 'custom', per_second: 5, burst: 9, per_day: 1234 });
    expect(await store.workspace('wnosuchthing2')).toBeUndefined();
  });

  it('adds registrations all or none: a taken label refuses the whole request', async () => {
    const instance = (label: string) => ({ instanceLabel: label, libraryVersion: '0.2.2', instance: { skill_id: 'telling/pacing', instance_label: label } });
    const added = await store.addRegistrations(consumerId, [instance('one'), instance('two')]);
    expect(added.map((r) => r.instance.instance_label)).toEqual(['one', 'two']);
    await expect(store.addRegistrations(consumerId, [instance('three'), instance('two')])).rejects.toBeInstanceOf(RegistrationLabelTakenError);
    expect((await store.registrations(consumerId)).map((r) => r.instance.instance_label)).toEqual(['one', 'two']);
    expect(await store.removeRegistration(consumerId, added[0]!.registration_id)).toBe(true);
    expect(await store.removeRegistration(consumerId, added[0]!.registration_id)).toBe(false);
  });

  it('holds at most REGISTRATIONS_PER_CONSUMER_MAX registrations a connection: an add past it, or two at once, refused whole', async () => {
    const full = 'cadminstore33';
    await database.tenancy.connection({ id: full, app_id: appId, kind: 'consumer' });
    const instance = (label: string) => ({ instanceLabel: label, libraryVersion: '0.2.2', instance: { skill_id: 'telling/pacing', instance_label: label } });
    const labels = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => instance(`${prefix}${i}`));
    await store.addRegistrations(full, labels(REGISTRATIONS_PER_CONSUMER_MAX - 1, 'r'));
    await expect(store.addRegistrations(full, labels(2, 'x'))).rejects.toBeInstanceOf(RegistrationsFullError);
    expect(await store.registrations(full)).toHaveLength(REGISTRATIONS_PER_CONSUMER_MAX - 1);
    await store.addRegistrations(full, labels(1, 'x'));
    await expect(store.addRegistrations(full, labels(1, 'y'))).rejects.toThrow(
      `a consumer connection holds at most ${REGISTRATIONS_PER_CONSUMER_MAX} skill registrations: this one has ${REGISTRATIONS_PER_CONSUMER_MAX}, the request adds 1`,
    );
    // Room for two: of four adds of two at once, one gets it.
    const [first, second] = await store.registrations(full);
    for (const r of [first!, second!]) expect(await store.removeRegistration(full, r.registration_id)).toBe(true);
    const outcomes = await database.atOnce(['p', 'q', 's', 't'].map((prefix) => () => store.addRegistrations(full, labels(2, prefix))));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(await store.registrations(full)).toHaveLength(REGISTRATIONS_PER_CONSUMER_MAX);
  });

  it('answers a connection search whose list and counts agree while connections are added', async () => {
    const app = await database.tenancy.app({ workspace_id: 'wadminstore22' });
    let adding = true;
    const writer = (async () => {
      // Fewer than the search's limit of 1,000, so the list holds every one.
      for (let added = 0; adding && added < 500; added++) await database.tenancy.connection({ app_id: app.id, kind: 'producer' });
    })();
    const totals: number[] = [];
    try {
      for (let i = 0; i < 60; i++) {
        const found = await store.connectionSearch({ appIds: [app.id], text: '', removed: false }, 1_000);
        expect([found.connections.length, found.matching]).toEqual([found.all, found.all]);
        totals.push(found.all);
      }
    } finally {
      adding = false;
      await writer;
    }
    // Connections were added while the searches ran.
    expect(totals.at(-1)).toBeGreaterThan(totals[0]!);
  });

  it('reads a running replay whose heartbeat stopped as interrupted, and a finished one with its counts', async () => {
    const job = await store.createReplay(consumerId, new Date('2026-11-22T00:00:00Z'));
    expect(job).toMatchObject({ status: 'running', scanned: 0, finished_at: null, error: null });
    await db('replay_jobs')
      .where({ id: job.replay_id })
      .update({ heartbeat_at: new Date(Date.now() - REPLAY_STALE_MS - 1_000) });
    expect((await store.replay(job.replay_id))?.status).toBe('interrupted');
    await store.heartbeatReplay(job.replay_id);
    expect((await store.replay(job.replay_id))?.status).toBe('running');
    await store.finishReplay(job.replay_id, { status: 'succeeded', scanned: 7, replayed: 5, skipped: 2 });
    expect(await store.replay(job.replay_id)).toMatchObject({ status: 'succeeded', scanned: 7, replayed: 5, skipped: 2, finished_at: expect.any(String) });

    const failed = await store.createReplay(consumerId, new Date());
    await store.finishReplay(failed.replay_id, { status: 'failed', error: 'the archive could not be read' });
    await db('replay_jobs')
      .where({ id: failed.replay_id })
      .update({ heartbeat_at: new Date(0) });
    // Finished jobs are never reported as interrupted, however old their last heartbeat.
    expect(await store.replay(failed.replay_id)).toMatchObject({ status: 'failed', error: 'the archive could not be read' });
  });
});

describe('the quarantine list on the real Postgres', () => {
  const record = (offset: number, workspaceId: string | null, reason: string, value: Buffer | null) => ({
    topic: 'bus.messages.v1',
    kafka_partition: 2,
    kafka_offset: 1000 + offset,
    workspace_id: workspaceId,
    message_id: workspaceId === null ? null : `m-${offset}`,
    reason,
    headers: JSON.stringify({ secret_header: 'never listed' }),
    value,
  });

  beforeAll(async () => {
    await db('quarantined_records').insert([
      record(0, 'wadminstore22', 'acceptance.missing', Buffer.from('{"a":1}')),
      record(1, 'wothersstore2', 'acceptance.missing', Buffer.from('{}')),
      record(2, 'wadminstore22', 'acceptance.hash_mismatch', Buffer.from('{"body":"never listed"}')),
      record(3, null, 'headers.unreadable', Buffer.from('x')),
      record(4, 'wadminstore22', 'value.missing', null),
    ]);
  });

  it('lists metadata only, oldest first, filtered by workspace and reason, a page at a time', async () => {
    const all = await store.quarantinedRecords({ limit: 10 });
    expect(all.nextAfter).toBeNull();
    expect(all.records.map((r) => [r.offset, r.reason])).toEqual([
      ['1000', 'acceptance.missing'],
      ['1001', 'acceptance.missing'],
      ['1002', 'acceptance.hash_mismatch'],
      ['1003', 'headers.unreadable'],
      ['1004', 'value.missing'],
    ]);
    expect(all.records[0]).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      topic: 'bus.messages.v1',
      partition: 2,
      offset: '1000',
      workspace_id: 'wadminstore22',
      message_id: 'm-0',
      reason: 'acceptance.missing',
      quarantined_at: expect.any(String),
      size_bytes: 7,
    });
    expect(all.records[4]?.size_bytes).toBeNull();
    expect(JSON.stringify(all)).not.toContain('never listed');

    const ours = await store.quarantinedRecords({ workspaceId: 'wadminstore22', limit: 2 });
    expect(ours.records.map((r) => r.offset)).toEqual(['1000', '1002']);
    expect(ours.nextAfter).toBe(ours.records[1]?.id);
    const rest = await store.quarantinedRecords({ workspaceId: 'wadminstore22', limit: 2, after: ours.nextAfter! });
    expect(rest).toEqual({ records: [expect.objectContaining({ offset: '1004' })], nextAfter: null });

    const missing = await store.quarantinedRecords({ workspaceId: 'wadminstore22', reason: 'acceptance.missing', limit: 10 });
    expect(missing.records.map((r) => r.offset)).toEqual(['1000']);
  });
});
