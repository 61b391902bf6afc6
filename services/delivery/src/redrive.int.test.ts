/**
 * The operator's redrive of quarantined records on the real Postgres: records quarantined as delivery
 * quarantines them (the store's own quarantine()), acceptances recorded as the gateway records them
 * (its exported store), and the redrive through delivery's own check and enqueue.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { KnexPublishStore } from '@bus/gateway';
import { encodeMessageHeaders } from '@bus/kafka';
import { createMetricsRegistry } from '@bus/observability';
import { som } from '@bus/schemas';
import { bodyDigest, contentHash } from '@bus/som';
import { createRedriveMetrics, KnexDeliveryStore, redriveQuarantined, type RedriveDeps } from '@bus/queue';

const workspaceId = 'wredrivetest2';
const producerId = 'credriveprod2';
const consumers = ['credrivecona2', 'credriveconb2'];
const topic = 'bus.messages.v1';

const database = useTestDatabase({ applicationName: 'redrive-test', poolMax: 8 });
let db: Knex;
let store: KnexDeliveryStore;
let deps: RedriveDeps;
const metrics = createMetricsRegistry({ defaultMetrics: false });

beforeAll(async () => {
  db = database.db;
  await database.tenancy.tenant({
    workspaceId,
    connections: [{ id: producerId, kind: 'producer' }, ...consumers.map((id) => ({ id, kind: 'consumer' as const }))],
  });
  store = KnexDeliveryStore.create(db);
  deps = { store, logger: pino({ level: 'silent' }), metrics: createRedriveMetrics(metrics) };
}, 30_000);

type Message = Record<string, unknown> & { message_id: string; correlation_id: string };

function started(): Message {
  const example = som.examples['telling.started'] as Record<string, unknown>;
  return { ...example, message_id: randomUUID(), correlation_id: `c-${randomUUID()}`, occurred_at: new Date().toISOString() };
}

/** The gateway's acceptance row for `message` (its store, under the correlation lock), as a late commit lands. */
async function accept(message: Message): Promise<void> {
  await KnexPublishStore.create(db).withStoryLocks({ stories: [{ workspaceId, correlationId: message.correlation_id }], lockTimeoutMs: 5_000 }, (tx) =>
    tx.record(
      [
        {
          workspaceId,
          messageId: message.message_id,
          contentHash: contentHash(message),
          bodySha256: bodyDigest(Buffer.from(JSON.stringify(message))),
          messageType: 'telling.started',
          correlationId: message.correlation_id,
          producerConnectionId: producerId,
          acceptedAt: new Date(),
          kafkaPartition: 0,
          kafkaOffset: '0',
        },
      ],
      [],
    ),
  );
}

let offset = 0;
/** Quarantines a record as delivery does, and answers its id. */
async function quarantined(message: Message, value: Buffer | null, reason: string, headers?: Record<string, string>): Promise<string> {
  const kafkaOffset = String(offset++);
  await store.quarantine({
    topic,
    partition: 1,
    offset: kafkaOffset,
    workspaceId,
    messageId: message.message_id,
    reason,
    headers:
      headers ??
      (encodeMessageHeaders({
        workspace_id: workspaceId,
        message_id: message.message_id,
        message_type: 'telling.started',
        family: 'telling',
        producer_connection_id: producerId,
        content_hash: contentHash(message),
        accepted_at: new Date().toISOString(),
        traceparent: null,
      }) as Record<string, string>),
    value,
  });
  const row = (await db('quarantined_records').where({ topic, kafka_partition: 1, kafka_offset: kafkaOffset }).first('id')) as { id: string };
  return String(row.id);
}

const deliveriesOf = (messageId: string) => db('deliveries').where({ message_id: messageId }).orderBy('consumer_id').pluck('consumer_id');
const stillQuarantined = async (id: string) => (await db('quarantined_records').where({ id })).length === 1;

async function redrives(outcome: string): Promise<number> {
  const counted = await metrics.getSingleMetric('bus_quarantine_redrives_total')?.get();
  return counted?.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

describe('redriving quarantined records on the real Postgres', () => {
  it('enqueues a record whose acceptance committed after delivery gave up, with its exact bytes, and takes it out of quarantine', async () => {
    const message = started();
    const raw = Buffer.from(JSON.stringify(message, null, 1));
    const id = await quarantined(message, raw, 'acceptance.missing');
    const before = await redrives('redriven');

    // Still no acceptance: refused, and it stays.
    expect(await redriveQuarantined(deps, [id])).toEqual([
      { id, outcome: 'refused', workspace_id: workspaceId, message_id: message.message_id, reason: 'acceptance.missing' },
    ]);
    expect(await stillQuarantined(id)).toBe(true);
    expect(await deliveriesOf(message.message_id)).toEqual([]);

    await accept(message);
    expect(await redriveQuarantined(deps, [id])).toEqual([
      { id, outcome: 'redriven', workspace_id: workspaceId, message_id: message.message_id, deliveries: 2 },
    ]);
    expect(await deliveriesOf(message.message_id)).toEqual(consumers);
    const [stored] = await db('messages').where({ workspace_id: workspaceId, message_id: message.message_id }).pluck('body');
    expect(Buffer.compare(stored as Buffer, raw)).toBe(0);
    expect(await stillQuarantined(id)).toBe(false);
    expect(await redrives('redriven')).toBe(before + 1);

    // Asked again, the record is gone: nothing more is enqueued.
    expect(await redriveQuarantined(deps, [id])).toEqual([{ id, outcome: 'not_found' }]);
    expect(await deliveriesOf(message.message_id)).toEqual(consumers);
  });

  it('makes no second delivery for a message already enqueued meanwhile (invariant D)', async () => {
    const message = started();
    const raw = Buffer.from(JSON.stringify(message));
    await accept(message);
    const id = await quarantined(message, raw, 'acceptance.missing');
    // A redelivery of the same record found the acceptance and enqueued it; the quarantine row stayed.
    await store.enqueue({
      workspaceId,
      messageId: message.message_id,
      body: raw,
      messageType: 'telling.started',
      correlationId: message.correlation_id,
      publishedAt: new Date(),
      kafkaPartition: 1,
      kafkaOffset: '999',
      traceparent: null,
    });
    await db('deliveries')
      .where({ message_id: message.message_id, consumer_id: consumers[0] })
      .update({ state: 'acked', acked_at: new Date(), is_head: false });

    expect(await redriveQuarantined(deps, [id])).toEqual([
      { id, outcome: 'redriven', workspace_id: workspaceId, message_id: message.message_id, deliveries: 0 },
    ]);
    const rows = await db('deliveries').where({ message_id: message.message_id }).orderBy('consumer_id').select('consumer_id', 'state');
    expect(rows).toEqual([
      { consumer_id: consumers[0], state: 'acked' },
      { consumer_id: consumers[1], state: 'queued' },
    ]);
  });

  it('refuses what invariant A refuses and leaves it in quarantine: another content under the accepted id, unreadable value or headers', async () => {
    const message = started();
    await accept(message);
    const altered = Buffer.from(JSON.stringify({ ...message, payload: { altered: true } }));
    const mismatch = await quarantined(message, altered, 'acceptance.hash_mismatch');
    const unreadable = await quarantined(message, Buffer.from(`${JSON.stringify(message)} trailing`), 'value.unreadable');
    const missing = await quarantined(message, null, 'value.missing');
    const noHeaders = await quarantined(message, Buffer.from(JSON.stringify(message)), 'headers.unreadable', { message_id: message.message_id });
    const before = await redrives('refused');

    const results = await redriveQuarantined(deps, [mismatch, unreadable, missing, noHeaders, '999999999', 'not-an-id']);
    expect(results.map((r) => [r.id, r.outcome, 'reason' in r ? r.reason : null])).toEqual([
      [mismatch, 'refused', 'acceptance.hash_mismatch'],
      [unreadable, 'refused', 'value.unreadable'],
      [missing, 'refused', 'value.missing'],
      [noHeaders, 'refused', 'headers.unreadable'],
      ['999999999', 'not_found', null],
      ['not-an-id', 'not_found', null],
    ]);
    for (const id of [mismatch, unreadable, missing, noHeaders]) expect(await stillQuarantined(id)).toBe(true);
    expect(await deliveriesOf(message.message_id)).toEqual([]);
    expect(await db('messages').where({ message_id: message.message_id })).toEqual([]);
    expect(await redrives('refused')).toBe(before + 4);
  });

  it('redrives a record once when two redrives race for it', async () => {
    const message = started();
    await accept(message);
    const id = await quarantined(message, Buffer.from(JSON.stringify(message)), 'acceptance.missing');
    const [first, second] = await Promise.all([redriveQuarantined(deps, [id]), redriveQuarantined(deps, [id])]);
    expect([first![0]!.outcome, second![0]!.outcome].sort()).toEqual(['not_found', 'redriven']);
    expect(await deliveriesOf(message.message_id)).toEqual(consumers);
  });
});
