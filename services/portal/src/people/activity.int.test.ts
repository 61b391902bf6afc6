import { useTestDatabase } from '@bus/fixtures';
import { ACTIVITY_WINDOW_MINUTES, readActivity, writeActivity } from '@bus/db';
import type { ActivityRow } from '@bus/observability';
import { createActivityRecorder, createLogger, createMetricsRegistry } from '@bus/observability';

// The activity store (libs/db activity.ts) on a real Postgres, as the processes' recorders write it
// and the portal's activity routes read it.
const database = useTestDatabase({ applicationName: 'activity-test' });
const MINUTE = 60_000;
const minuteOf = (at: number) => Math.floor(at / MINUTE) * MINUTE;

let workspaceId: string;
let producerId: string;
let consumerId: string;
let otherWorkspaceConsumer: string;

beforeAll(async () => {
  const { tenancy } = database;
  const org = await tenancy.organisation();
  const workspace = await tenancy.workspace({ organisation_id: org.id });
  const app = await tenancy.app({ workspace_id: workspace.id });
  workspaceId = workspace.id;
  producerId = (await tenancy.connection({ app_id: app.id, kind: 'producer' })).id;
  consumerId = (await tenancy.connection({ app_id: app.id, kind: 'consumer' })).id;
  const other = await tenancy.workspace({ organisation_id: org.id });
  const otherApp = await tenancy.app({ workspace_id: other.id });
  otherWorkspaceConsumer = (await tenancy.connection({ app_id: otherApp.id, kind: 'consumer' })).id;
});

const counts = (row: Partial<ActivityRow> & Pick<ActivityRow, 'minute' | 'connectionId'>): ActivityRow => ({
  published: 0,
  refused: {},
  delivered: 0,
  acked: 0,
  queueDepth: null,
  oldestAgeSeconds: null,
  ...row,
});

describe('the activity store', () => {
  it('adds what several processes wrote for one minute, per workspace and per connection', async () => {
    const now = Date.now();
    const minute = new Date(minuteOf(now));
    const before = new Date(minuteOf(now) - 2 * MINUTE);
    // The gateway, delivery and the pull API each write their part of the same minutes.
    await writeActivity(database.db, [
      counts({ minute, connectionId: producerId, published: 3, refused: { 'schema.invalid': 1 } }),
      counts({ minute: before, connectionId: producerId, published: 1 }),
    ]);
    await writeActivity(database.db, [
      counts({ minute, connectionId: producerId, published: 2, refused: { 'schema.invalid': 2, 'sequence.out_of_order': 1 } }),
      counts({ minute, connectionId: consumerId, delivered: 5, queueDepth: 4, oldestAgeSeconds: 12.5 }),
      counts({ minute, connectionId: otherWorkspaceConsumer, delivered: 100, queueDepth: 100, oldestAgeSeconds: 999 }),
    ]);
    await writeActivity(database.db, [counts({ minute, connectionId: consumerId, acked: 2 })]);

    const workspace = await readActivity(database.db, { workspaceId }, 5, new Date(now));
    expect(workspace.minutes).toBe(5);
    expect(workspace.points).toHaveLength(5);
    expect(workspace.points.at(-1)).toEqual({
      minute: minute.toISOString(),
      published: 5,
      delivered: 5,
      acked: 2,
      refused: { 'schema.invalid': 3, 'sequence.out_of_order': 1 },
      // The last sample stays when a later write of the minute carries none.
      queue_depth: 4,
      oldest_age_seconds: 12.5,
    });
    expect(workspace.points.at(-3)).toMatchObject({ minute: before.toISOString(), published: 1, refused: {} });
    expect(workspace.points.at(-2)).toMatchObject({ published: 0, delivered: 0, acked: 0, queue_depth: null, oldest_age_seconds: null });
    expect(workspace.rules).toEqual(['schema.invalid', 'sequence.out_of_order']);
    expect(workspace.from).toBe(new Date(minuteOf(now) - 4 * MINUTE).toISOString());
    expect(workspace.to).toBe(new Date(minuteOf(now) + MINUTE).toISOString());

    const consumer = await readActivity(database.db, { connectionId: consumerId }, 1, new Date(now));
    expect(consumer.points).toEqual([expect.objectContaining({ published: 0, delivered: 5, acked: 2, queue_depth: 4 })]);
  });

  it('keeps no minute past the window, and drops the counts of a connection that is gone', async () => {
    const { tenancy, db } = database;
    const org = await tenancy.organisation();
    const workspace = await tenancy.workspace({ organisation_id: org.id });
    const app = await tenancy.app({ workspace_id: workspace.id });
    const producer = (await tenancy.connection({ app_id: app.id, kind: 'producer' })).id;
    const now = minuteOf(Date.now());
    await db('activity_minutes').insert({
      connection_id: producer,
      workspace_id: workspace.id,
      minute: new Date(now - (ACTIVITY_WINDOW_MINUTES + 5) * MINUTE),
      published: 9,
    });
    await writeActivity(db, [
      counts({ minute: new Date(now), connectionId: producer, published: 1 }),
      counts({ minute: new Date(now - (ACTIVITY_WINDOW_MINUTES + 1) * MINUTE), connectionId: producer, published: 7 }),
      counts({ minute: new Date(now), connectionId: 'cnosuchconnxx', published: 1 }),
    ]);
    const rows = await db('activity_minutes').where({ workspace_id: workspace.id }).select('minute', 'published');
    expect(rows.map((r) => [r.minute.getTime(), Number(r.published)])).toEqual([[now, 1]]);
    expect(await db('activity_minutes').where({ connection_id: 'cnosuchconnxx' }).count({ n: '*' })).toEqual([{ n: '0' }]);
    // A span asked past the window is answered as the window.
    expect((await readActivity(db, { workspaceId: workspace.id }, 10 * ACTIVITY_WINDOW_MINUTES)).points).toHaveLength(ACTIVITY_WINDOW_MINUTES);
  });

  it('takes a recorder flush in one write, and a store outage costs the counts only', async () => {
    const { tenancy, db } = database;
    const org = await tenancy.organisation();
    const workspace = await tenancy.workspace({ organisation_id: org.id });
    const app = await tenancy.app({ workspace_id: workspace.id });
    const producer = (await tenancy.connection({ app_id: app.id, kind: 'producer' })).id;
    let statements = 0;
    const count = () => void (statements += 1);
    db.on('query', count);
    let down = false;
    const lines: string[] = [];
    const activity = createActivityRecorder({
      write: (rows) => (down ? Promise.reject(new Error('Connection terminated unexpectedly')) : writeActivity(db, rows)),
      logger: createLogger({ service: 'test', level: 'warn', destination: { write: (line: string) => void lines.push(line) } }),
      metrics: createMetricsRegistry({ defaultMetrics: false }),
    });
    for (let i = 0; i < 500; i += 1) activity.published(producer);
    activity.refused(producer, 'policy.message_type_not_permitted');
    await activity.flush();
    db.off('query', count);
    expect(statements).toBe(1);

    down = true;
    activity.published(producer);
    await activity.flush();
    expect(lines.join('\n')).toMatch(/activity counts could not be written/);

    const read = await readActivity(db, { workspaceId: workspace.id }, 2);
    expect(read.points.reduce((sum, p) => sum + p.published, 0)).toBe(500);
    expect(read.rules).toEqual(['policy.message_type_not_permitted']);
  });
});
