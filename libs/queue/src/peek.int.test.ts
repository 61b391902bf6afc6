import { useTestDatabase } from '@bus/fixtures';
import { KnexDeliveryStore, type MessageToEnqueue } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { KnexQueueStore } from './queue-store';
import { PEEK_FILTER_HEADS } from './sql/peek';

/**
 * Peek on the real Postgres: a message-type filter looks through the oldest PEEK_FILTER_HEADS
 * correlation ids only and says so when it stopped short; a correlation-id filter shows that story's
 * run; nothing is leased.
 */

const database = useTestDatabase({ applicationName: 'queue-peek', poolMax: 4 });
let deliveries: KnexDeliveryStore;
let queue: KnexQueueStore;

beforeAll(() => {
  deliveries = KnexDeliveryStore.create(database.db);
  queue = KnexQueueStore.create(database.db);
});

async function newConsumer(): Promise<{ workspaceId: string; consumer: string }> {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  return { workspaceId: tenant.workspaceId, consumer: tenant.connectionIds[0]! };
}

const AUDIT = 'system.audit';

/** One more story than a filtered peek looks through, each of two telling.started — except the audits `audited` places second in those stories. */
async function storiesPastTheBound(workspaceId: string, audited: number[]): Promise<Map<number, MessageToEnqueue>> {
  const audits = new Map<number, MessageToEnqueue>();
  const batch: MessageToEnqueue[] = [];
  for (let story = 0; story <= PEEK_FILTER_HEADS; story += 1) batch.push(messageToEnqueue(workspaceId, `s${story}`));
  for (let story = 0; story <= PEEK_FILTER_HEADS; story += 1) {
    const second = audited.includes(story) ? messageToEnqueue(workspaceId, `s${story}`, { messageType: AUDIT }) : messageToEnqueue(workspaceId, `s${story}`);
    if (audited.includes(story)) audits.set(story, second);
    batch.push(second);
  }
  await deliveries.write({ enqueue: batch, quarantine: [] });
  return audits;
}

it('finds a type among the oldest correlation ids it looks through, and says it stopped short when none of them has it', async () => {
  const within = await newConsumer();
  const audits = await storiesPastTheBound(within.workspaceId, [3, PEEK_FILTER_HEADS - 1]);
  const expected = [audits.get(3)!.messageId, audits.get(PEEK_FILTER_HEADS - 1)!.messageId];
  const found = await queue.peek(within.consumer, 10, { messageType: AUDIT });
  expect(found.messages.map((m) => m.messageId)).toEqual(expected);
  // Fewer than asked for, and a correlation id was left out: the queue holds more than was looked through.
  expect(found.truncated).toBe(true);
  // As many as asked for: nothing to say.
  const enough = await queue.peek(within.consumer, 2, { messageType: AUDIT });
  expect(enough.messages.map((m) => m.messageId)).toEqual(expected);
  expect(enough.truncated).toBe(false);

  const beyond = await newConsumer();
  const late = await storiesPastTheBound(beyond.workspaceId, [PEEK_FILTER_HEADS]);
  expect(await queue.peek(beyond.consumer, 10, { messageType: AUDIT })).toEqual({ messages: [], truncated: true });
  // Its own correlation id finds it, and the unfiltered peek never says truncated.
  const story = await queue.peek(beyond.consumer, 10, { correlationId: `s${PEEK_FILTER_HEADS}`, messageType: AUDIT });
  expect(story).toEqual({ messages: [expect.objectContaining({ messageId: late.get(PEEK_FILTER_HEADS)!.messageId })], truncated: false });
  expect((await queue.peek(beyond.consumer, 10, {})).truncated).toBe(false);
  // Nothing was leased: a receive still gets the oldest story first.
  const received = await queue.receive(beyond.consumer, 2, 60_000);
  expect(received.messages.map((m) => [m.correlationId, m.receiveCount])).toEqual([
    ['s0', 1],
    ['s0', 1],
  ]);
});

it('answers a type no message has with nothing, not truncated, when it looked through every correlation id', async () => {
  const { workspaceId, consumer } = await newConsumer();
  await deliveries.write({ enqueue: [messageToEnqueue(workspaceId, 'a'), messageToEnqueue(workspaceId, 'b')], quarantine: [] });
  expect(await queue.peek(consumer, 10, { messageType: AUDIT })).toEqual({ messages: [], truncated: false });
  expect((await queue.peek(consumer, 10, { correlationId: 'b' })).messages.map((m) => m.correlationId)).toEqual(['b']);
  expect(await queue.peek(consumer, 10, { correlationId: 'nope' })).toEqual({ messages: [], truncated: false });
});
