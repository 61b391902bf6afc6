import { useTestDatabase } from '@bus/fixtures';
import { KnexDeliveryStore } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { KnexQueueStore } from './queue-store';
import { DEAD_LETTERS_PER_RECEIVE } from './sql/dead-letter-due';

/**
 * Dead-lettering on the real Postgres when a receive limit finds many heads already past it (a limit
 * set or lowered over a queue received before): each call moves the oldest DEAD_LETTERS_PER_RECEIVE,
 * and no head at the limit is handed out while it waits for its turn.
 */

const database = useTestDatabase({ applicationName: 'queue-dead-letter-due', poolMax: 4 });

it('moves the oldest heads at the limit a batch a call, and a gated receive hands none of the rest out meanwhile', async () => {
  const deliveries = KnexDeliveryStore.create(database.db);
  const queue = KnexQueueStore.create(database.db);
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  const consumer = tenant.connectionIds[0]!;
  const stories = DEAD_LETTERS_PER_RECEIVE + 5;
  await deliveries.write({ enqueue: Array.from({ length: stories }, (_, i) => messageToEnqueue(tenant.workspaceId, `s${i}`)), quarantine: [] });
  // Every head received once, its lease since run out.
  for (let leased = 0; leased < stories;) leased += (await queue.receive(consumer, 10, 120_000)).messages.length;
  await database.db.raw(`UPDATE deliveries SET visible_at = now() - interval '1 second' WHERE consumer_id = ?`, [consumer]);

  const gate = { receiveLimit: 1, delayMs: 0 };
  expect((await queue.receive(consumer, 10, 120_000, gate)).messages).toEqual([]);
  expect(await queue.deadLetterDue(consumer, 1)).toBe(DEAD_LETTERS_PER_RECEIVE);
  const lettered = await database.db('dead_letters').where({ consumer_id: consumer }).pluck('correlation_id');
  expect(new Set(lettered)).toEqual(new Set(Array.from({ length: DEAD_LETTERS_PER_RECEIVE }, (_, i) => `s${i}`)));
  expect((await queue.receive(consumer, 10, 120_000, gate)).messages).toEqual([]);
  expect(await queue.deadLetterDue(consumer, 1)).toBe(5);
  expect(await queue.deadLetterDue(consumer, 1)).toBe(0);
  expect(await database.db('dead_letters').where({ consumer_id: consumer }).count<{ count: string }[]>('* as count')).toEqual([{ count: String(stories) }]);
});
