import { BROWSE_PREVIEW_CHARS, browseQueue } from './browse';
import type { InFlightMessage, PeekedMessage } from './queue-store';

const at = new Date('2026-11-29T06:00:00.000Z');
const message = (n: number, body: string): PeekedMessage => ({
  deliveryId: String(n),
  messageId: `m-${n}`,
  messageType: 'story.context',
  correlationId: `c-${n}`,
  publishedAt: at,
  receiveCount: n,
  body: Buffer.from(body),
});

describe('browseQueue', () => {
  it('lists up to max of each, says when more are there, and previews each body as a receive hands it out', async () => {
    const waiting = [message(1, '{"a":1,"b":[2]}'), message(2, 'not json'), message(3, '{}')];
    const leased: InFlightMessage[] = [{ ...message(4, `{"note":"${'x'.repeat(3_000)}"}`), leaseEndsAt: new Date('2026-11-29T06:00:30.000Z') }];
    const asked: Array<[string, number, unknown]> = [];
    const browse = await browseQueue(
      {
        browse: async (consumerId, max, gate) => {
          asked.push([consumerId, max, gate]);
          return { waiting: { messages: waiting.slice(0, max), truncated: false }, inFlight: leased.slice(0, max) };
        },
      },
      'cconsumer2345',
      2,
      { receiveLimit: 3, delayMs: 0 },
    );
    // One more than listed is asked for, to know whether more are there; the consumer's gate goes with it.
    expect(asked).toEqual([['cconsumer2345', 3, { receiveLimit: 3, delayMs: 0 }]]);
    expect(browse.waiting.map((m) => [m.message_id, m.body_preview, m.lease_ends_at])).toEqual([
      ['m-1', '{\n  "a": 1,\n  "b": [\n    2\n  ]\n}', null],
      ['m-2', 'not json', null],
    ]);
    expect(browse.waiting_truncated).toBe(true);
    expect(browse.in_flight_truncated).toBe(false);
    const [inFlight] = browse.in_flight;
    expect(inFlight).toMatchObject({ message_id: 'm-4', lease_ends_at: '2026-11-29T06:00:30.000Z', receive_count: 4, body_bytes: 3_011 });
    expect(inFlight?.body_preview).toHaveLength(BROWSE_PREVIEW_CHARS + 1);
    expect(inFlight?.body_preview.endsWith('…')).toBe(true);
  });
});
