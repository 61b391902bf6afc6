import fc from 'fast-check';
import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { eventually } from '@bus/testing';
import { resolveDeadLetter } from './dead-letters';
import { KnexDeliveryStore, type MessageToEnqueue } from './delivery-store';
import { messageToEnqueue } from './message-to-enqueue';
import { KnexQueueStore, type LeasedMessage } from './queue-store';

/**
 * The queue against a model of it, on the real Postgres: random interleavings of enqueues on a few
 * correlation ids, receives (max 1–10, leases long or so short they expire at once), acks, nacks with
 * and without a delay, dead-lettering past a receive threshold and redrives or discards of dead
 * letters, and replays of acked messages. After every step: each story's head marker is on its oldest un-acked delivery and no other;
 * after every receive: FIFO per correlation id (a message comes only after all earlier ones of its
 * correlation id were acked, or ahead of it in the same answer) and no double lease (nothing under a
 * lease still running comes out again). At the end every message is received and acked: none is lost.
 */

const STORIES = ['s0', 's1', 's2', 's3'];
const LONG_MS = 120_000;
const SHORT_MS = 1;
const MAX_RECEIVES = 3;

const database = useTestDatabase({ applicationName: 'queue-property', poolMax: 6 });
let db: Knex;
let deliveries: KnexDeliveryStore;
let queue: KnexQueueStore;

beforeAll(async () => {
  db = database.db;
  deliveries = KnexDeliveryStore.create(db);
  queue = KnexQueueStore.create(db);
}, 30_000);

type Op =
  | { kind: 'publish'; stories: number[] }
  | { kind: 'receive'; max: number; long: boolean }
  | { kind: 'ack'; picks: number[] }
  | { kind: 'nack'; pick: number; delayMs: number }
  | { kind: 'deadLetter' }
  | { kind: 'resolve'; pick: number; redrive: boolean }
  | { kind: 'replay'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('publish' as const), stories: fc.array(fc.nat(STORIES.length - 1), { minLength: 1, maxLength: 4 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('receive' as const), max: fc.integer({ min: 1, max: 10 }), long: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), picks: fc.array(fc.nat(50), { minLength: 1, maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('nack' as const), pick: fc.nat(50), delayMs: fc.constantFrom(0, 0, 30, 150) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'deadLetter' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resolve' as const), pick: fc.nat(50), redrive: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat(50) }) },
);

/** What the model knows of one message. */
interface Modelled {
  story: string;
  /** What was enqueued: a replay enqueues it again. */
  enqueued: MessageToEnqueue;
  /** Its place in its story (0 first). */
  index: number;
  deliveryId?: string;
  state: 'queued' | 'leased' | 'acked' | 'dead';
  /** The last lease a receive handed out, and whether it is one that cannot have ended yet. */
  lease?: { generation: number; running: boolean };
  received: number;
}

/**
 * Deliveries of `consumer` whose head marker is wrong (on an acked row, on a later row, or missing from
 * the oldest un-acked one), or whose dead-letter marker is (set on a row that is not an open dead
 * letter, or missing from one): either would list a row in the wrong heads index.
 */
async function wrongHeads(consumer: string): Promise<unknown[]> {
  const { rows } = await db.raw(
    `SELECT d.id, d.correlation_id, d.is_head, d.dead_lettered, d.acked_at IS NULL AS unacked FROM deliveries d
      WHERE d.consumer_id = ? AND (d.dead_lettered <> (d.acked_at IS NULL AND d.visible_at = 'infinity') OR d.is_head <> (d.acked_at IS NULL AND d.id = (
        SELECT min(x.id) FROM deliveries x WHERE x.consumer_id = d.consumer_id AND x.correlation_id = d.correlation_id AND x.acked_at IS NULL)))`,
    [consumer],
  );
  return rows as unknown[];
}

async function newConsumer(): Promise<{ workspaceId: string; consumer: string }> {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  return { workspaceId: tenant.workspaceId, consumer: tenant.connectionIds[0]! };
}

it('keeps FIFO per correlation id, leases each message to one receiver at a time and loses nothing, against a model', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 40 }), async (ops) => {
      const { workspaceId, consumer } = await newConsumer();
      const model = new Map<string, Modelled>();
      const byDelivery = new Map<string, string>();
      const perStory = new Map<string, string[]>(STORIES.map((s) => [s, []]));
      const held = () => [...model.entries()].filter(([, m]) => m.state === 'leased');

      const checkAnswer = (answer: LeasedMessage[]) => {
        const seen = new Set<string>();
        for (const leased of answer) {
          const m = model.get(leased.messageId);
          expect(m).toBeDefined();
          // At most once at a time: nothing under a running lease, acked or dead-lettered comes out.
          const problem = m!.state === 'acked' ? 'acked' : m!.state === 'dead' ? 'dead-lettered' : m!.lease?.running ? 'under a running lease' : null;
          expect({ message: leased.messageId, problem }).toEqual({ message: leased.messageId, problem: null });
          // FIFO: every earlier message of its story acked, or ahead of it in this answer.
          const earlier = perStory.get(m!.story)!.slice(0, m!.index);
          const blocking = earlier.filter((id) => model.get(id)!.state !== 'acked' && !seen.has(id));
          expect({ message: leased.messageId, blocking }).toEqual({ message: leased.messageId, blocking: [] });
          seen.add(leased.messageId);
        }
      };

      for (const step of ops) {
        switch (step.kind) {
          case 'publish': {
            const batch = step.stories.map((s) => messageToEnqueue(workspaceId, STORIES[s]!));
            await deliveries.write({ enqueue: batch, quarantine: [] });
            for (const m of batch) {
              const list = perStory.get(m.correlationId)!;
              model.set(m.messageId, { story: m.correlationId, enqueued: m, index: list.length, state: 'queued', received: 0 });
              list.push(m.messageId);
            }
            break;
          }
          case 'receive': {
            const { messages } = await queue.receive(consumer, step.max, step.long ? LONG_MS : SHORT_MS);
            checkAnswer(messages);
            for (const leased of messages) {
              const m = model.get(leased.messageId)!;
              m.state = 'leased';
              m.deliveryId = leased.deliveryId;
              m.lease = { generation: leased.generation, running: step.long };
              m.received += 1;
              byDelivery.set(leased.deliveryId, leased.messageId);
            }
            break;
          }
          case 'ack': {
            const leases = held();
            if (leases.length === 0) break;
            const picked = [...new Set(step.picks.map((p) => leases[p % leases.length]!))];
            const outcomes = await queue.ack(
              consumer,
              picked.map(([, m]) => ({ deliveryId: m.deliveryId!, generation: m.lease!.generation })),
            );
            // The last lease handed out of a leased message is current: it acks, expired or not.
            expect(outcomes).toEqual(picked.map(() => 'done'));
            for (const [, m] of picked) {
              m.state = 'acked';
              m.lease = undefined;
            }
            break;
          }
          case 'nack': {
            const leases = held();
            if (leases.length === 0) break;
            const [, m] = leases[step.pick % leases.length]!;
            expect(await queue.nack(consumer, [{ deliveryId: m.deliveryId!, generation: m.lease!.generation }], step.delayMs)).toEqual(['done']);
            // Released with the leased run after it in its story.
            for (const id of perStory.get(m.story)!.slice(m.index)) {
              const later = model.get(id)!;
              if (later.state === 'leased') {
                later.state = 'queued';
                later.lease = undefined;
              }
            }
            break;
          }
          case 'deadLetter': {
            await queue.deadLetterDue(consumer, MAX_RECEIVES);
            const dead = await db('dead_letters').where({ consumer_id: consumer }).whereNull('resolved_at').pluck('delivery_id');
            for (const deliveryId of dead) {
              const m = model.get(byDelivery.get(String(deliveryId))!)!;
              // Only a receivable head goes: never a message under a running lease.
              expect(m.lease?.running ?? false).toBe(false);
              m.state = 'dead';
              m.lease = undefined;
            }
            break;
          }
          case 'resolve': {
            const open = await db('dead_letters').where({ consumer_id: consumer }).whereNull('resolved_at').orderBy('id').select('id', 'delivery_id');
            if (open.length === 0) break;
            const letter = open[step.pick % open.length]!;
            await resolveDeadLetter(db, consumer, String(letter.id), step.redrive ? 'redriven' : 'discarded');
            const m = model.get(byDelivery.get(String(letter.delivery_id))!)!;
            m.state = step.redrive ? 'queued' : 'acked';
            break;
          }
          case 'replay': {
            // An acked message queued again: it may be older than its story's head, and becomes the head.
            const acked = [...model.values()].filter((m) => m.state === 'acked');
            if (acked.length === 0) break;
            const m = acked[step.pick % acked.length]!;
            expect(await deliveries.replay(m.enqueued, consumer)).toBe(true);
            m.state = 'queued';
            break;
          }
        }
        expect(await wrongHeads(consumer)).toEqual([]);
      }

      // Nothing lost: every dead letter redriven, every lease given up, and everything received and acked.
      for (const [, m] of held()) {
        if (m.state !== 'leased') continue;
        await queue.nack(consumer, [{ deliveryId: m.deliveryId!, generation: m.lease!.generation }], 0);
        for (const id of perStory.get(m.story)!.slice(m.index)) {
          const later = model.get(id)!;
          if (later.state === 'leased') {
            later.state = 'queued';
            later.lease = undefined;
          }
        }
      }
      await eventually(
        async () => {
          for (const letter of await db('dead_letters').where({ consumer_id: consumer }).whereNull('resolved_at').select('id', 'delivery_id')) {
            await resolveDeadLetter(db, consumer, String(letter.id), 'redriven');
            model.get(byDelivery.get(String(letter.delivery_id))!)!.state = 'queued';
          }
          const { messages } = await queue.receive(consumer, 10, LONG_MS);
          checkAnswer(messages);
          if (messages.length > 0) {
            expect(await queue.ack(consumer, messages)).toEqual(messages.map(() => 'done'));
            for (const leased of messages) {
              model.get(leased.messageId)!.state = 'acked';
              byDelivery.set(leased.deliveryId, leased.messageId);
            }
          }
          return [...model.values()].filter((m) => m.state !== 'acked').length;
        },
        (left) => left === 0,
        { what: 'every message received and acked', timeoutMs: 10_000, retryReadErrors: false },
      );
      expect(await db('deliveries').where({ consumer_id: consumer }).whereNull('acked_at').count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '0' }]);
      expect(await wrongHeads(consumer)).toEqual([]);
    }),
    { numRuns: Number(process.env.QUEUE_PROPERTY_RUNS ?? 40) },
  );
}, 120_000);

it('leaves each story exactly one head when an enqueue of its next message races the ack of its head', async () => {
  const { workspaceId, consumer } = await newConsumer();
  for (let round = 0; round < 30; round++) {
    const story = `race-${round}`;
    await deliveries.write({ enqueue: [messageToEnqueue(workspaceId, story)], quarantine: [] });
    const { messages } = await queue.receive(consumer, 10, LONG_MS);
    expect(messages.map((m) => m.correlationId)).toEqual([story]);
    const next = messageToEnqueue(workspaceId, story);
    await Promise.all([queue.ack(consumer, messages), deliveries.write({ enqueue: [next], quarantine: [] })]);
    expect(await wrongHeads(consumer)).toEqual([]);
    const after = await queue.receive(consumer, 10, LONG_MS);
    expect(after.messages.map((m) => m.messageId)).toEqual([next.messageId]);
    await queue.ack(consumer, after.messages);
  }
}, 60_000);
