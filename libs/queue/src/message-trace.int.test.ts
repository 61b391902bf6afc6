import { useTestDatabase } from '@bus/fixtures';
import { KnexDeliveryStore } from './delivery-store';
import { TRACE_FAULTS_MAX, readMessageTrace } from './message-trace';
import { messageToEnqueue } from './message-to-enqueue';
import { TRACE_CONSUMERS_MAX } from './sql/message-trace';

/**
 * The message trace's bounds on the real Postgres: a removed consumer connection is listed only when
 * it holds a copy, at most TRACE_CONSUMERS_MAX are listed (the answer says when more were left out),
 * and a copy shows its latest TRACE_FAULTS_MAX injected faults.
 */

const database = useTestDatabase({ applicationName: 'queue-message-trace', poolMax: 4 });

/** The gateway's acceptance of an enqueued message: what a trace starts from. */
function accept(workspaceId: string, message: ReturnType<typeof messageToEnqueue>) {
  return database.db('accepted_messages').insert({
    workspace_id: workspaceId,
    message_id: message.messageId,
    message_type: message.messageType,
    correlation_id: message.correlationId,
    producer_connection_id: 'cproducer2345',
    accepted_at: new Date(),
    kafka_partition: 0,
    kafka_offset: 1,
    content_hash: 'a'.repeat(64),
  });
}

it('lists a removed consumer only with a copy, and says when it left consumers out', async () => {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  const holder = tenant.connectionIds[0]!;
  const message = messageToEnqueue(tenant.workspaceId, 'story-1');
  await KnexDeliveryStore.create(database.db).write({ enqueue: [message], quarantine: [] });
  await accept(tenant.workspaceId, message);
  // A consumer made after the enqueue has no copy.
  const idle = (await database.tenancy.connection({ app_id: tenant.appId, kind: 'consumer' })).id;
  const trace = () => readMessageTrace(database.db, tenant.workspaceId, message.messageId);
  expect((await trace())!.deliveries.map((d) => [d.consumer_id, d.state]).sort()).toEqual(
    [
      [holder, 'queued'],
      [idle, 'not_enqueued'],
    ].sort(),
  );

  // Removed: the one holding a copy stays listed, the other goes.
  await database.db('connections').whereIn('id', [holder, idle]).update({ status: 'removed' });
  expect((await trace())!.deliveries.map((d) => [d.consumer_id, d.state])).toEqual([[holder, 'queued']]);

  await database.tenancy.connections(TRACE_CONSUMERS_MAX, () => ({ app_id: tenant.appId, workspace_id: tenant.workspaceId, kind: 'consumer' }));
  const full = (await trace())!;
  expect(full.deliveries).toHaveLength(TRACE_CONSUMERS_MAX);
  expect(full.deliveries_truncated).toBe(true);
});

it("shows a copy's latest faults, oldest first", async () => {
  const tenant = await database.tenancy.tenant({ connections: [{ kind: 'consumer' }] });
  const consumer = tenant.connectionIds[0]!;
  const message = messageToEnqueue(tenant.workspaceId, 'story-2');
  await KnexDeliveryStore.create(database.db).write({ enqueue: [message], quarantine: [] });
  await accept(tenant.workspaceId, message);
  const delivery = (await database.db('deliveries').where({ consumer_id: consumer }).first('id'))!.id;
  const start = Date.parse('2026-11-30T00:00:00Z');
  await database.db('consumer_fault_events').insert(
    Array.from({ length: TRACE_FAULTS_MAX + 5 }, (_, i) => ({
      consumer_id: consumer,
      delivery_id: delivery,
      message_id: message.messageId,
      kind: 'early_expiry',
      injected_at: new Date(start + i * 1000),
      detail_ms: i,
    })),
  );
  const trace = (await readMessageTrace(database.db, tenant.workspaceId, message.messageId))!;
  expect(trace.deliveries_truncated).toBe(false);
  expect(trace.deliveries[0]!.faults.map((f) => f.detail_ms)).toEqual(Array.from({ length: TRACE_FAULTS_MAX }, (_, i) => i + 5));
});
