import { Router, type Request } from 'express';
import { QUARANTINE_ID, REFUSAL_REASONS, type RedriveResult } from '@bus/delivery';
import * as body from './admin-requests';
import { jsonBody, queryId } from './admin-routes';
import type { AdminStore } from './admin-store';
import { AdminRequestInvalidError } from './errors';

/** Delivery's redrive (services/delivery redriveQuarantined), wired in the composition root. */
export interface QuarantineOperations {
  redrive(ids: readonly string[]): Promise<RedriveResult[]>;
}

export interface QuarantineRoutesDeps {
  store: AdminStore;
  queues: QuarantineOperations;
}

/** Records a list page shows unless told otherwise, and the most a page or a redrive takes. */
export const QUARANTINE_PAGE = { default: 50, max: 100 } as const;

const LIST_PARAMETERS = ['workspace_id', 'reason', 'limit', 'after'];

/**
 * The operator's view of delivery's quarantine (docs/admin.md, "Quarantine"): Kafka records delivery
 * refused to enqueue (invariant A), listed by their metadata only — never a value or a header, which
 * carry message bodies — and redriven through delivery's own check. Mounted after adminRoutes, behind
 * the same operator authentication; adminRoutes' no-store header covers every /api/admin answer.
 */
export function quarantineRoutes(deps: QuarantineRoutesDeps): Router {
  const router = Router();

  router.get('/api/admin/quarantine', async (req, res) => {
    const unknown = Object.keys(req.query).find((name) => !LIST_PARAMETERS.includes(name));
    if (unknown !== undefined) throw new AdminRequestInvalidError(`Unknown query parameter ${JSON.stringify(unknown.slice(0, 60))} (parameters: ${LIST_PARAMETERS.join(', ')})`);
    const workspaceId = queryId(req, 'workspace_id', 'w');
    const reasonText = queryString(req, 'reason');
    const reason = reasonText === undefined ? undefined : body.oneOfField({ reason: reasonText }, 'reason', REFUSAL_REASONS);
    const after = queryString(req, 'after');
    const page = await deps.store.quarantinedRecords({
      ...(workspaceId === undefined ? {} : { workspaceId }),
      ...(reason === undefined ? {} : { reason }),
      ...(after === undefined ? {} : { after: quarantineId(after, 'after') }),
      limit: pageLimit(queryString(req, 'limit')),
    });
    res.json({ records: page.records, next_after: page.nextAfter });
  });

  router.post('/api/admin/quarantine/redrive', async (req, res) => {
    const b = await jsonBody(req, ['ids', 'workspace_id', 'after']);
    if ((b.ids === undefined) === (b.workspace_id === undefined)) throw new AdminRequestInvalidError('Give exactly one of ids and workspace_id');
    if (b.ids !== undefined) {
      if (b.after !== undefined) throw new AdminRequestInvalidError('after goes with workspace_id only');
      res.json({ results: await deps.queues.redrive(redriveIds(b.ids)), next_after: null });
      return;
    }
    // A workspace's records a page at a time, oldest first, so each request stays short.
    const page = await deps.store.quarantinedRecords({
      workspaceId: body.id(b, 'workspace_id', 'w'),
      ...(b.after === undefined ? {} : { after: quarantineId(b.after, 'after') }),
      limit: QUARANTINE_PAGE.max,
    });
    res.json({ results: await deps.queues.redrive(page.records.map((r) => r.id)), next_after: page.nextAfter });
  });
  return router;
}

function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new AdminRequestInvalidError(`${name} must be given once`);
  return value;
}

function quarantineId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !QUARANTINE_ID.test(value)) throw new AdminRequestInvalidError(`${field} must be a quarantined record id: digits, as the list gives them`);
  return value;
}

function pageLimit(value: string | undefined): number {
  if (value === undefined) return QUARANTINE_PAGE.default;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : 0;
  if (limit < 1 || limit > QUARANTINE_PAGE.max) throw new AdminRequestInvalidError(`limit must be a whole number from 1 to ${QUARANTINE_PAGE.max}`);
  return limit;
}

function redriveIds(value: unknown): string[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > QUARANTINE_PAGE.max) {
    throw new AdminRequestInvalidError(`ids must be a list of 1 to ${QUARANTINE_PAGE.max} quarantined record ids`);
  }
  const ids = value.map((id) => quarantineId(id, 'each of ids'));
  if (new Set(ids).size !== ids.length) throw new AdminRequestInvalidError('ids must not repeat an id');
  return ids;
}
