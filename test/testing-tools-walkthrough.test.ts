/**
 * docs/testing-tools.md's "Testing a consumer" and "Testing a producer", run as a tester runs them
 * (test/support/walkthrough.ts: the marked blocks in one bash, in a checkout with the demo tenant of a
 * bus of this test's own). What the blocks print is what is asserted.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { deliveryCaughtUp } from './support/delivery';
import { runInShell, walkthroughBlocks, walkthroughCheckout, walkthroughFailure, type Walkthrough } from './support/walkthrough';

/** Both walk-throughs' bound: the consumer's last receive waits 5 s for nothing. */
const WALKTHROUGH_TIMEOUT_MS = 120_000;
const DOC = path.join(REPO_ROOT, 'docs/testing-tools.md');

let bus: RunningBus;
let checkout: string;
let ran: Walkthrough;

const linesOf = (text: string | undefined): string[] => (text ?? '').split('\n').filter((l) => l !== '');
const exportOf = (file: string) =>
  linesOf(readFileSync(path.join(checkout, '.local', file), 'utf8')).map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });

beforeAll(async () => {
  bus = await startBus();
  ({ checkout } = await walkthroughCheckout(bus));
  await deliveryCaughtUp(bus);
  ran = await runInShell(checkout, walkthroughBlocks(readFileSync(DOC, 'utf8')), WALKTHROUGH_TIMEOUT_MS);
}, WALKTHROUGH_TIMEOUT_MS + 180_000);

afterAll(async () => {
  await bus?.stop();
  if (checkout) rmSync(checkout, { recursive: true, force: true });
}, 30_000);

describe("docs/testing-tools.md's walk-throughs, run in a shell against a bus of their own", () => {
  it('has the two blocks, and every command in them succeeds', () => {
    expect(walkthroughBlocks(readFileSync(DOC, 'utf8')).map((b) => b.name)).toEqual(['consumer', 'producer']);
    const failure = walkthroughFailure(ran);
    if (failure) throw failure;
    expect(Object.keys(ran.sections)).toEqual(['consumer', 'producer']);
  });

  it('testing a consumer: ready with an empty queue, a simulated story received in order once and acked, its export shows the acks', () => {
    const [ready, ...rest] = linesOf(ran.sections.consumer);
    expect(ready).toBe('active queue depth 0');
    const summary = rest.find((l) => / messages of 1 stories: /.test(l)) ?? '';
    const total = Number(/^(\d+) messages of 1 stories: (\d+) accepted, 0 duplicates, 0 refused, 0 not sent/.exec(summary)?.[1]);
    expect(total).toBeGreaterThan(0);
    const received = rest.filter((l) => / receive_count /.test(l));
    expect(received).toHaveLength(total);
    expect(received.every((l) => l.endsWith(' receive_count 1'))).toBe(true);
    expect(rest.at(-1)).toMatch(new RegExp(`^story \\S+: ${total} messages, ${total} deliveries, \\d+ bytes to \\.local/consumer-story\\.ndjson$`));

    const lines = exportOf('consumer-story.ndjson');
    expect(lines.at(-1)).toMatchObject({ type: 'end', messages: total, truncated: false });
    // The export's order is the order received: a story arrives in its publish order.
    expect(lines.filter((l) => l.type === 'message').map((l) => l.message_type)).toEqual(received.map((l) => l.split(' ')[0]));
    expect(lines.filter((l) => l.type === 'delivery').every((l) => l.acked === true && l.receive_count === 1)).toBe(true);
  });

  it('testing a producer: the corpus validated in order, published, and exported byte for byte, the consumer not having received it yet', () => {
    const out = linesOf(ran.sections.producer);
    expect(out[0]).toBe('10 checked: 10 accepted, 0 refused, 0 not checked');
    expect(out.slice(1, 11)).toEqual(Array.from({ length: 10 }, (_, i) => `202 message-${String(i).padStart(2, '0')}.json`));
    expect(out[11]).toMatch(/^story \S+: 10 messages, 10 deliveries, \d+ bytes to \.local\/producer-story\.ndjson$/);
    expect(out[12]).toBe('every body as published');
    const copies = exportOf('producer-story.ndjson').filter((l) => l.type === 'delivery');
    expect(copies.every((l) => l.acked === false && l.receive_count === 0)).toBe(true);
  });
});
