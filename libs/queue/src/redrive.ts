import { Counter, type Registry } from 'prom-client';
import type { RedriveResult, RefusalReason } from '@bus/contracts';
import { METRICS, type Logger } from '@bus/observability';
import { checkAcceptance, readMessageHeaders } from './acceptance-check';
import type { DeliveryStore, StoredQuarantinedRecord } from './delivery-store';

/** quarantined_records.id as the admin API takes it: a positive bigint, well inside int8. */
const QUARANTINE_ID = /^[1-9][0-9]{0,17}$/;

export interface RedriveDeps {
  store: DeliveryStore;
  logger: Logger;
  metrics: RedriveMetrics;
}

export interface RedriveMetrics {
  redrives: Counter<'outcome'>;
}

export function createRedriveMetrics(registry: Registry): RedriveMetrics {
  return {
    redrives: new Counter({
      ...METRICS.quarantineRedrives,
      help: 'Quarantined records an operator asked to redrive, by outcome (redriven, refused, not_found)',
      registers: [registry],
    }),
  };
}

/**
 * The operator's redrive (the portal's POST /api/admin/quarantine/redrive): runs invariant A's check
 * (checkAcceptance, the very one delivery runs) again, now, for each quarantined record. A record
 * whose acceptance is there with the same content hash — typically `acceptance.missing`, whose
 * acceptance committed after delivery stopped waiting — is enqueued exactly as delivery would have
 * (idempotent on (consumer, message_id), invariant D) and leaves quarantine in the same transaction.
 * Any other record stays as it is, and the answer says why (the reason as of now). In order, one
 * record at a time.
 */
export async function redriveQuarantined(deps: RedriveDeps, ids: readonly string[]): Promise<RedriveResult[]> {
  const results: RedriveResult[] = [];
  for (const id of ids) {
    const result = await redriveOne(deps.store, id);
    deps.metrics.redrives.inc({ outcome: result.outcome });
    if (result.outcome !== 'not_found') deps.logger.info(result, 'quarantined record redrive');
    results.push(result);
  }
  return results;
}

async function redriveOne(store: DeliveryStore, id: string): Promise<RedriveResult> {
  const record = QUARANTINE_ID.test(id) ? await store.quarantined(id) : undefined;
  if (!record) return { id, outcome: 'not_found' };
  return redriveRecord(store, record);
}

/**
 * Invariant A's check, now, for one quarantined record as read from quarantine, and its enqueue when
 * it passes (the record leaves quarantine in the same transaction): the operator's redrive and the
 * automatic re-check of `acceptance.missing` both go through it.
 */
export async function redriveRecord(store: DeliveryStore, record: StoredQuarantinedRecord): Promise<RedriveResult> {
  const { id } = record;
  const refused = (reason: RefusalReason): RedriveResult => ({
    id,
    outcome: 'refused',
    workspace_id: record.workspaceId,
    message_id: record.messageId,
    reason,
  });
  const headers = readMessageHeaders(record.headers);
  if (headers === null) return refused('headers.unreadable');
  const check = await checkAcceptance(store, { headers, value: record.value, partition: record.partition, offset: record.offset });
  if (!check.accepted) return refused(check.reason);
  const consumers = await store.releaseQuarantined(id, check.message);
  if (consumers === null) return { id, outcome: 'not_found' };
  return { id, outcome: 'redriven', workspace_id: check.message.workspaceId, message_id: check.message.messageId, deliveries: consumers.length };
}
