import { createTestDatabase, type TestDatabase } from '@bus/testing';
import {
  createDatabase,
  migrateLatest,
  openTestRun,
  readRecentRefusals,
  readRunRecords,
  readStory,
  readStoryHeads,
  writeRefusals,
  type Knex,
  type RefusalRecord,
} from './index';

let testDb: TestDatabase;
let db: Knex;
let writer: Knex;
const ids = { org: 'orefusals2345', workspace: 'wrefusals2345', app: 'arefusals2345', producer: 'crefusals2345' };

/** A refused publish of the producer, breaking `rule` (and schema.type). */
const refusal = (messageId: string, correlationId: string | null, rule: string): RefusalRecord => ({
  workspaceId: ids.workspace,
  connectionId: ids.producer,
  mode: 'publish',
  messageId,
  messageType: 'story.context',
  correlationId,
  status: 400,
  violations: [
    { source: 'schema', rule, message: 'refused' },
    { source: 'schema', rule: 'schema.type', message: 'refused too' },
  ],
  violationsOmitted: 0,
  refusedAt: new Date(),
});

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = createDatabase({ url: testDb.url, poolMax: 2, applicationName: 'refusals-test' });
  writer = createDatabase({ url: testDb.url, poolMax: 1, applicationName: 'refusals-writer' });
  await migrateLatest(db);
  await db('organisations').insert({ id: ids.org, name: 'House', kind: 'house' });
  await db('workspaces').insert({ id: ids.workspace, organisation_id: ids.org, name: 'Refusals' });
  await db('apps').insert({ id: ids.app, workspace_id: ids.workspace, organisation_id: ids.org, name: 'Producer app' });
  await db('connections').insert({ id: ids.producer, app_id: ids.app, workspace_id: ids.workspace, kind: 'producer' });
  await writeRefusals(
    db,
    [refusal('m-1', 'Story-One', 'schema.required'), refusal('m-2', 'story_100%', 'policy.system_id_not_allowed'), refusal('m-3', null, 'schema.required')],
    [],
  );
}, 30_000);
afterAll(async () => {
  await writer.destroy();
  await db.destroy();
  await testDb.drop();
});

const listed = async (filter: { rule?: string; text?: string }) =>
  (await readRecentRefusals(db, ids.producer, { limit: 20, ...filter })).refusals.map((r) => r.message_id);

describe('recent refusals, narrowed', () => {
  it('keeps those with a violation of the rule, any of their violations', async () => {
    expect(await listed({ rule: 'schema.required' })).toEqual(['m-3', 'm-1']);
    expect(await listed({ rule: 'schema.type' })).toEqual(['m-3', 'm-2', 'm-1']);
    expect(await listed({ rule: 'schema' })).toEqual([]);
  });

  it('keeps those whose message id or correlation id contains the text, case-insensitive, % and _ literal', async () => {
    expect(await listed({ text: 'STORY-' })).toEqual(['m-1']);
    expect(await listed({ text: 'M-3' })).toEqual(['m-3']);
    expect(await listed({ text: '_100%' })).toEqual(['m-2']);
    expect(await listed({ text: '%' })).toEqual(['m-2']);
    expect(await listed({ rule: 'schema.required', text: 'story' })).toEqual(['m-1']);
  });

  it("names each story's newest accepted message, and none for a story without one", async () => {
    const accepted = (messageId: string, correlationId: string, at: string, workspaceId = ids.workspace) => ({
      workspace_id: workspaceId,
      message_id: messageId,
      content_hash: 'a'.repeat(64),
      message_type: 'story.context',
      correlation_id: correlationId,
      producer_connection_id: ids.producer,
      accepted_at: new Date(at),
      kafka_partition: 0,
      kafka_offset: 1,
    });
    await db('accepted_messages').insert([accepted('a-1', 'Story-One', '2026-11-01T10:00:00Z'), accepted('a-2', 'Story-One', '2026-11-01T10:05:00Z')]);
    expect(await readStoryHeads(db, ids.workspace, ['Story-One', 'story_100%', 'Story-One'])).toEqual(new Map([['Story-One', 'a-2']]));
    expect(await readStoryHeads(db, 'wotherworksp2', ['Story-One'])).toEqual(new Map());
    expect(await readStoryHeads(db, ids.workspace, [])).toEqual(new Map());
  });
});

describe("a test run's report while refusals commit", () => {
  it('lists exactly the refusals it counts, however the writes fall between its reads', async () => {
    const run = await openTestRun(db, { workspaceId: ids.workspace, label: 'race', openedBy: ids.producer, durationSeconds: 600 });
    let written = 0;
    let reading = true;
    const writing = (async () => {
      // Fewer than RUN_REPORT_MESSAGES_MAX, so every refusal counted is also listed.
      while (reading && written < 400) await writeRefusals(writer, [refusal(`race-${written++}`, 'Race', 'schema.enum')], []);
    })();
    const seen: number[] = [];
    try {
      for (let read = 0; read < 60 && written < 400; read++) {
        const records = await readRunRecords(db, run);
        const listed = records.messages.filter((m) => m.outcome === 'refused').length;
        const byRule = records.by_rule.find((r) => r.rule === 'schema.enum')?.refusals ?? 0;
        expect([listed, byRule]).toEqual([records.totals.refused, records.totals.refused]);
        seen.push(listed);
      }
    } finally {
      reading = false;
      await writing;
    }
    // The reads overlapped the writes: they saw the count grow.
    expect(new Set(seen).size).toBeGreaterThan(2);
  });
});

describe('a story view while its messages are accepted', () => {
  it('shows the state each listed message made, however the commits fall between its reads', async () => {
    const story = 'Racing';
    let written = 0;
    let reading = true;
    const writing = (async () => {
      // As a publish commits: the accepted message and the story's new state in one transaction.
      for (; reading && written < 400; written++) {
        await writer.transaction(async (tx) => {
          await tx('accepted_messages').insert({
            workspace_id: ids.workspace,
            message_id: `story-${written}`,
            content_hash: 'b'.repeat(64),
            message_type: 'story.context',
            correlation_id: story,
            producer_connection_id: ids.producer,
            accepted_at: new Date(),
            kafka_partition: 0,
            kafka_offset: written,
          });
          await tx('story_state')
            .insert({ workspace_id: ids.workspace, correlation_id: story, state: { accepted: written + 1 }, updated_at: new Date() })
            .onConflict(['workspace_id', 'correlation_id'])
            .merge();
        });
      }
    })();
    const seen: number[] = [];
    try {
      for (let read = 0; read < 60 && written < 400; read++) {
        const view = await readStory(db, ids.workspace, story);
        const accepted = (view?.state as { accepted?: number } | null | undefined)?.accepted ?? 0;
        expect(view?.messages.length ?? 0).toBe(accepted);
        seen.push(accepted);
      }
    } finally {
      reading = false;
      await writing;
    }
    expect(new Set(seen).size).toBeGreaterThan(2);
  });
});
