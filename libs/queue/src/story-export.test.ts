import type { Knex, StoryView } from '@bus/db';
import { STORY_EXPORT_LIMITS, storyExportLines, type StoryExportLine } from './story-export';

/** The export's lines over a stand-in for Postgres: bodies and copies answered per statement, by the ids asked for. */
function fakeDb(bodyOf: (id: string) => Buffer | undefined, copies: (id: string) => Array<Record<string, unknown>> = () => []): Knex {
  const ids = (bindings: { messageIds: string }) => bindings.messageIds.slice(2, -2).split('","');
  return {
    raw: async (sql: string, bindings: { messageIds: string }) => ({
      rows: sql.includes('FROM messages')
        ? ids(bindings).flatMap((id) => (bodyOf(id) ? [{ message_id: id, body: bodyOf(id) }] : []))
        : ids(bindings).flatMap(copies),
    }),
  } as unknown as Knex;
}

function story(count: number, truncated = false): StoryView {
  return {
    correlation_id: 'story-1',
    state: null,
    state_updated_at: null,
    messages: Array.from({ length: count }, (_, i) => ({
      message_id: `m-${i}`,
      message_type: 'telling.exposed',
      accepted_at: '2026-11-29T06:00:00.000Z',
      producer_connection_id: 'cproducer2345',
    })),
    truncated,
  };
}

async function exported(db: Knex, view: StoryView): Promise<{ text: string; lines: StoryExportLine[] }> {
  let text = '';
  for await (const line of storyExportLines(db, 'wworkspace234', view, new Date('2026-11-29T07:00:00.000Z'))) text += line;
  return {
    text,
    lines: text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as StoryExportLine),
  };
}

describe('storyExportLines', () => {
  it('gives each body as text when it is UTF-8 (a BOM kept), base64 when not, and says when none is stored', async () => {
    const bodies: Record<string, Buffer> = { 'm-0': Buffer.from('\ufeff{"a": 1}'), 'm-1': Buffer.from([0x7b, 0xff, 0x7d]) };
    const { lines } = await exported(
      fakeDb((id) => bodies[id]),
      story(3),
    );
    expect(lines.filter((l) => l.type === 'message').map((l) => [l.body, l.body_base64, l.stored])).toEqual([
      ['\ufeff{"a": 1}', undefined, true],
      [null, Buffer.from([0x7b, 0xff, 0x7d]).toString('base64'), true],
      [null, undefined, false],
    ]);
    expect(lines.at(-1)).toEqual({ type: 'end', messages: 3, deliveries: 0, bytes: expect.any(Number), truncated: false });
  });

  it('follows each message with its copies, and counts them', async () => {
    const copy = (id: string) => [
      {
        consumer_id: 'ca',
        message_id: id,
        state: 'acked',
        enqueued_at: new Date(0),
        visible_at: new Date(0),
        dead_lettered: false,
        receive_count: 1,
        first_received_at: new Date(1),
        acked_at: new Date(1),
        nack_count: 0,
        last_nacked_at: null,
      },
      {
        consumer_id: 'cb',
        message_id: id,
        state: 'queued',
        enqueued_at: new Date(0),
        visible_at: null,
        dead_lettered: true,
        receive_count: 3,
        first_received_at: new Date(0),
        acked_at: null,
        nack_count: 0,
        last_nacked_at: null,
      },
    ];
    const { lines } = await exported(
      fakeDb(() => Buffer.from('{}'), copy),
      story(2),
    );
    expect(lines.map((l) => (l.type === 'delivery' ? `${l.consumer_id} ${l.message_id} ${l.acked}` : l.type))).toEqual([
      'story',
      'message',
      'ca m-0 true',
      'cb m-0 false',
      'message',
      'ca m-1 true',
      'cb m-1 false',
      'end',
    ]);
    expect(lines.at(-1)).toMatchObject({ messages: 2, deliveries: 4 });
    expect(lines[2]).toMatchObject({ receive_count: 1, first_received_at: new Date(1).toISOString() });
  });

  it('stops before a line would pass the byte bound, with a truncated line and the end line inside it', async () => {
    const big = Buffer.from(`"${'x'.repeat(230_000)}"`);
    const { text, lines } = await exported(
      fakeDb(() => big),
      story(100),
    );
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(STORY_EXPORT_LIMITS.bytes);
    const written = lines.filter((l) => l.type === 'message').length;
    expect(written).toBeLessThan(100);
    expect(lines.slice(-2)).toEqual([
      { type: 'truncated', reason: 'bytes' },
      {
        type: 'end',
        messages: written,
        deliveries: 0,
        bytes: Buffer.byteLength(text) - Buffer.byteLength(`${JSON.stringify(lines.at(-1))}\n`),
        truncated: true,
      },
    ]);
  });

  it("says when the story view's own bound left messages out", async () => {
    const { lines } = await exported(
      fakeDb(() => Buffer.from('{}')),
      story(2, true),
    );
    expect(lines.slice(-2)).toEqual([{ type: 'truncated', reason: 'messages' }, expect.objectContaining({ type: 'end', messages: 2, truncated: true })]);
  });
});
