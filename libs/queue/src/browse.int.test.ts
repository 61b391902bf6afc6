import { useTestDatabase } from '@bus/fixtures';
import { browseQueue } from './browse';
import { KnexDeliveryStore } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { KnexQueueStore } from './queue-store';

/**
 * The message browser on the real Postgres while a consumer receives and nacks: its waiting and
 * in-flight lists come from one snapshot, so no message is in both. A message can be in neither: one
 * nacked without delay is visible from the nack's clock, which a browse begun just before has not reached.
 */

const database = useTestDatabase({ applicationName: 'queue-browse', poolMax: 4 });

it('never lists a message both waiting and in flight while leases start and end around it', async () => {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  const consumer = tenant.connectionIds[0]!;
  // One message a story: each is its story's head, so nothing but a lease or a nack's clock holds it.
  const batch = Array.from({ length: 8 }, (_, i) => messageToEnqueue(tenant.workspaceId, `story-${i}`));
  await KnexDeliveryStore.create(database.db).write({ enqueue: batch, quarantine: [] });
  const queue = KnexQueueStore.create(database.db);

  let browsing = true;
  const churn = (async () => {
    while (browsing) {
      const { messages } = await queue.receive(consumer, 3, 30_000);
      await queue.nack(consumer, messages, 0);
    }
  })();
  const seen = { waiting: 0, inFlight: 0 };
  try {
    for (let i = 0; i < 150; i++) {
      const browse = await browseQueue(queue, consumer, 20);
      const inFlight = new Set(browse.in_flight.map((m) => m.message_id));
      expect(browse.waiting.filter((m) => inFlight.has(m.message_id))).toEqual([]);
      seen.waiting += browse.waiting.length;
      seen.inFlight += browse.in_flight.length;
    }
  } finally {
    browsing = false;
    await churn;
  }
  // The browses did run while messages moved between the lists.
  expect(seen.waiting).toBeGreaterThan(0);
  expect(seen.inFlight).toBeGreaterThan(0);
}, 60_000);
