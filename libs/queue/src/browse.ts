import type { BrowsedMessage, BrowseGate, QueueBrowse } from '@bus/contracts';
import type { ConsumerToolsStore, InFlightMessage, PeekedMessage } from './queue-store';

/** A browsed message's body is shown up to this many characters: the answer stays small however large the messages. */
export const BROWSE_PREVIEW_CHARS = 2_000;
/** Bodies up to this size are parsed to be pretty-printed; larger ones are shown as stored. */
const PRETTY_MAX_BYTES = 64 * 1024;

/**
 * The message browser's view of a consumer's queue (the portal's consumer page): what a receive would
 * take next (peek, under the consumer's gate) and what is leased, each message previewed as a receive
 * hands it out, both read in one snapshot. Read-only: no lease, no receive count.
 */
export async function browseQueue(store: Pick<ConsumerToolsStore, 'browse'>, consumerId: string, max: number, gate?: BrowseGate): Promise<QueueBrowse> {
  const { waiting: peeked, inFlight } = await store.browse(consumerId, max + 1, gate);
  const waiting = peeked.messages;
  return {
    waiting: waiting.slice(0, max).map((m) => browsed(m, null)),
    in_flight: inFlight.slice(0, max).map((m) => browsed(m, m.leaseEndsAt)),
    waiting_truncated: waiting.length > max,
    in_flight_truncated: inFlight.length > max,
  };
}

function browsed(m: PeekedMessage | InFlightMessage, leaseEndsAt: Date | null): BrowsedMessage {
  return {
    message_id: m.messageId,
    message_type: m.messageType,
    correlation_id: m.correlationId,
    published_at: m.publishedAt.toISOString(),
    receive_count: m.receiveCount,
    lease_ends_at: leaseEndsAt?.toISOString() ?? null,
    body_preview: preview(m.body),
    body_bytes: m.body.length,
  };
}

/** The body as text, pretty-printed when it is JSON of a modest size, cut at BROWSE_PREVIEW_CHARS. */
function preview(body: Buffer): string {
  const text = body.toString('utf8');
  let shown = text;
  if (body.length <= PRETTY_MAX_BYTES) {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not JSON (stored before the gateway refused such bytes): shown as stored.
    }
  }
  return shown.length > BROWSE_PREVIEW_CHARS ? `${shown.slice(0, BROWSE_PREVIEW_CHARS)}…` : shown;
}
