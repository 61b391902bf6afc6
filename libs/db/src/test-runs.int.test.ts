import { createTestDatabase, type TestDatabase } from '@bus/testing';
import { createDatabase, migrateLatest, openTestRun, readRunRecords, writeRefusals, type Knex, type RefusalRecord } from './index';

/** A run's report read while refusals keep committing: its list and its counts come from one snapshot. */
let testDb: TestDatabase;
let db: Knex;
let writer: Knex;
const ids = { org: 'orunrecords23', workspace: 'wrunrecords23', app: 'arunrecords23', producer: 'crunrecords23' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 2, applicationName: 'test-runs-test' });
  writer = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'test-runs-writer' });
  await migrateLatest(db);
  await db('organisations').insert({ id: ids.org, name: 'House', kind: 'house' });
  await db('workspaces').insert({ id: ids.workspace, organisation_id: ids.org, name: 'Runs' });
  await db('apps').insert({ id: ids.app, workspace_id: ids.workspace, organisation_id: ids.org, name: 'Producer app' });
  await db('connections').insert({ id: ids.producer, app_id: ids.app, workspace_id: ids.workspace, kind: 'producer' });
}, 30_000);
afterAll(async () => {
  await writer.destroy();
  await db.destroy();
  await testDb.drop();
});

const refusal = (n: number): RefusalRecord => ({
  workspaceId: ids.workspace,
  connectionId: ids.producer,
  mode: 'publish',
  messageId: `m-${n}`,
  messageType: 'story.context',
  correlationId: `story-${n}`,
  status: 400,
  violations: [{ source: 'schema', rule: 'schema.required', message: 'refused' }],
  violationsOmitted: 0,
  refusedAt: new Date(),
});

it('lists exactly the refusals it counts while others commit between its reads', async () => {
  const run = await openTestRun(db, { workspaceId: ids.workspace, label: 'race', openedBy: ids.producer, durationSeconds: 600 }, new Date(Date.now() - 1_000));
  let written = 0;
  let reading = true;
  const writing = (async () => {
    // Fewer than RUN_REPORT_MESSAGES_MAX, so every refusal counted is also listed.
    while (reading && written < 400) await writeRefusals(writer, [refusal(written++)], []);
  })();
  const seen: number[] = [];
  try {
    for (let read = 0; read < 60 && written < 400; read++) {
      const records = await readRunRecords(db, run);
      const listed = records.messages.filter((m) => m.outcome === 'refused').length;
      expect([listed, records.by_rule[0]?.refusals ?? 0]).toEqual([records.totals.refused, records.totals.refused]);
      seen.push(listed);
    }
  } finally {
    reading = false;
    await writing;
  }
  // The reads overlapped the writes: they saw the count grow.
  expect(new Set(seen).size).toBeGreaterThan(2);
});
