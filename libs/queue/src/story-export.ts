import { arrayParameter, rawQuery, type Knex, type Row, type StoryView } from '@bus/db';
import { STORY_EXPORT_BODIES } from './sql/story-export-bodies';
import { STORY_EXPORT_DELIVERIES } from './sql/story-export-deliveries';

/**
 * A story export (docs/testing-tools.md#story-export): what a test exchanged on one correlation id, as
 * NDJSON lines — the story, each accepted message with its exact bytes, each consumer connection's copy
 * of it — ending in an `end` line, so a cut-off answer is told from a whole one.
 */

/** The bounds of one export: the story view's messages (1,000), 16 MiB of lines, bodies read 50 at a time. */
export const STORY_EXPORT_LIMITS = { bytes: 16 * 1024 * 1024, page: 50 } as const;
/** Room kept under the byte bound for the `truncated` and `end` lines, so both always fit. */
const TRAILER_BYTES = 512;

export interface StoryExportHeader {
  type: 'story';
  correlation_id: string;
  state: Record<string, unknown> | null;
  state_updated_at: string | null;
  exported_at: string;
}

export interface StoryExportMessage {
  type: 'message';
  message_id: string;
  message_type: string;
  accepted_at: string;
  producer_connection_id: string;
  /** The bytes as accepted, as text; null when they are not UTF-8 (then body_base64) or not stored (then stored false). */
  body: string | null;
  body_base64?: string;
  /** False when the queues hold no body: delivery has not stored it yet, or the queue retention removed it. */
  stored: boolean;
}

export interface StoryExportDelivery {
  type: 'delivery';
  consumer_id: string;
  message_id: string;
  /** As stored: queued, leased (until visible_at) or acked; purged when a purge settled it (not acked by the consumer). */
  state: string;
  enqueued_at: string;
  /** When it becomes receivable (queued) or its lease ends (leased); null for a dead letter. */
  visible_at: string | null;
  dead_lettered: boolean;
  receive_count: number;
  /** The first receive that handed the copy out; null until one did. */
  first_received_at: string | null;
  acked: boolean;
  acked_at: string | null;
  nack_count: number;
  last_nacked_at: string | null;
}

export interface StoryExportTruncated {
  type: 'truncated';
  /** messages: the story has more than the story view's 1,000; bytes: the next line would pass 16 MiB. */
  reason: 'messages' | 'bytes';
}

export interface StoryExportEnd {
  type: 'end';
  messages: number;
  deliveries: number;
  /** The bytes of the lines before this one. */
  bytes: number;
  truncated: boolean;
}

export type StoryExportLine = StoryExportHeader | StoryExportMessage | StoryExportDelivery | StoryExportTruncated | StoryExportEnd;

type DeliveryRow = Pick<
  Row<'deliveries'>,
  'consumer_id' | 'message_id' | 'enqueued_at' | 'receive_count' | 'first_received_at' | 'acked_at' | 'nack_count' | 'last_nacked_at'
> & {
  state: string;
  visible_at: Date | null;
  dead_lettered: boolean;
};

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const iso = (at: Date | null): string | null => (at === null ? null : at.toISOString());

/** The body as the message line carries it: text when the bytes are UTF-8 (a BOM kept), else base64. */
function bodyFields(body: Buffer | undefined): Pick<StoryExportMessage, 'body' | 'body_base64' | 'stored'> {
  if (body === undefined) return { body: null, stored: false };
  try {
    return { body: utf8.decode(body), stored: true };
  } catch {
    return { body: null, body_base64: body.toString('base64'), stored: true };
  }
}

function deliveryLine(r: DeliveryRow): StoryExportDelivery {
  return {
    type: 'delivery',
    consumer_id: r.consumer_id,
    message_id: r.message_id,
    state: r.state,
    enqueued_at: r.enqueued_at.toISOString(),
    visible_at: iso(r.visible_at),
    dead_lettered: r.dead_lettered,
    receive_count: r.receive_count,
    first_received_at: iso(r.first_received_at),
    acked: r.acked_at !== null && r.state !== 'purged',
    acked_at: iso(r.acked_at),
    nack_count: r.nack_count,
    last_nacked_at: iso(r.last_nacked_at),
  };
}

/** The lines of one page of the story's messages: each message, then its copies by consumer. */
async function pageLines(db: Knex, workspaceId: string, page: StoryView['messages']): Promise<Array<StoryExportMessage | StoryExportDelivery>> {
  const bindings = { workspaceId, messageIds: arrayParameter(page.map((m) => m.message_id)) };
  const [bodies, deliveries] = await Promise.all([
    rawQuery<{ message_id: string; body: Buffer }>(db, STORY_EXPORT_BODIES, bindings),
    rawQuery<DeliveryRow>(db, STORY_EXPORT_DELIVERIES, bindings),
  ]);
  const bodyOf = new Map(bodies.rows.map((r) => [r.message_id, r.body]));
  const copiesOf = new Map<string, DeliveryRow[]>();
  for (const r of deliveries.rows) copiesOf.set(r.message_id, [...(copiesOf.get(r.message_id) ?? []), r]);
  return page.flatMap((m) => [
    { type: 'message' as const, ...m, ...bodyFields(bodyOf.get(m.message_id)) },
    ...(copiesOf.get(m.message_id) ?? []).map(deliveryLine),
  ]);
}

/**
 * The export of `story` (readStory's view of it in `workspaceId`) as NDJSON lines, each ending in a
 * newline, at most STORY_EXPORT_LIMITS.bytes in all. `read` wraps each database read (the route's 503).
 */
export async function* storyExportLines(
  db: Knex,
  workspaceId: string,
  story: StoryView,
  now: Date,
  read: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
): AsyncGenerator<string> {
  const count = { messages: 0, deliveries: 0, bytes: 0 };
  const header: StoryExportHeader = {
    type: 'story',
    correlation_id: story.correlation_id,
    state: story.state,
    state_updated_at: story.state_updated_at,
    exported_at: now.toISOString(),
  };
  let cut: StoryExportTruncated['reason'] | undefined = story.truncated ? 'messages' : undefined;
  const serialise = (line: StoryExportLine) => `${JSON.stringify(line)}\n`;
  const first = serialise(header);
  count.bytes += Buffer.byteLength(first);
  yield first;
  pages: for (let start = 0; start < story.messages.length; start += STORY_EXPORT_LIMITS.page) {
    const page = story.messages.slice(start, start + STORY_EXPORT_LIMITS.page);
    for (const line of await read(() => pageLines(db, workspaceId, page))) {
      const text = serialise(line);
      const size = Buffer.byteLength(text);
      if (count.bytes + size > STORY_EXPORT_LIMITS.bytes - TRAILER_BYTES) {
        cut = 'bytes';
        break pages;
      }
      count.bytes += size;
      count[line.type === 'message' ? 'messages' : 'deliveries'] += 1;
      yield text;
    }
  }
  if (cut) {
    const text = serialise({ type: 'truncated', reason: cut });
    count.bytes += Buffer.byteLength(text);
    yield text;
  }
  yield serialise({ type: 'end', ...count, truncated: cut !== undefined });
}
