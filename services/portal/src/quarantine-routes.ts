import type { Router } from 'express';
import { createRouter, validatedQuery, type RequestValidation } from '@bus/http';
import type { QueueOperations, RefusalReason } from '@bus/contracts';
import type { AdminStore } from './admin-store';

export interface QuarantineRoutesDeps {
  store: AdminStore;
  /** Delivery's redrive (libs/contracts), handed in by the composition root. */
  queues: Pick<QueueOperations, 'redrive'>;
  /** The admin document's request checks (libs/http requestValidation): query and body shapes live there. */
  requests: RequestValidation;
}

/** The most a page or a redrive takes (admin.json says the same: limit ≤ 100, ids ≤ 100). */
export const QUARANTINE_PAGE_MAX = 100;

/** A redrive body is at most 100 ids of 18 digits. */
const REDRIVE_BODY_BYTES = 16 * 1024;

/** The redrive body as admin.json's RedriveRequest admits it: ids, or a workspace and where to go on. */
type RedriveRequest = { ids: string[] } | { workspace_id: string; after?: string };

/**
 * The operator's view of delivery's quarantine (docs/admin.md, "Quarantine"): Kafka records delivery
 * refused to enqueue (invariant A), listed by their metadata only — never a value or a header, which
 * carry message bodies — and redriven through delivery's own check. Mounted after adminRoutes, behind
 * the same operator authentication and request validation; adminRoutes' no-store header covers every
 * /api/admin answer.
 */
export function quarantineRoutes(deps: QuarantineRoutesDeps): Router {
  const router = createRouter();

  router.get('/api/admin/quarantine', async (req, res) => {
    const query = validatedQuery(req) as { workspace_id?: string; reason?: RefusalReason; after?: string; limit: number };
    const page = await deps.store.quarantinedRecords({
      ...(query.workspace_id === undefined ? {} : { workspaceId: query.workspace_id }),
      ...(query.reason === undefined ? {} : { reason: query.reason }),
      ...(query.after === undefined ? {} : { after: query.after }),
      limit: query.limit,
    });
    res.json({ records: page.records, next_after: page.nextAfter });
  });

  router.post('/api/admin/quarantine/redrive', async (req, res) => {
    const request = (await deps.requests.jsonBody(req, REDRIVE_BODY_BYTES)) as RedriveRequest;
    if ('ids' in request) {
      res.json({ results: await deps.queues.redrive(request.ids), next_after: null });
      return;
    }
    // A workspace's records a page at a time, oldest first, so each request stays short.
    const page = await deps.store.quarantinedRecords({
      workspaceId: request.workspace_id,
      ...(request.after === undefined ? {} : { after: request.after }),
      limit: QUARANTINE_PAGE_MAX,
    });
    res.json({ results: await deps.queues.redrive(page.records.map((r) => r.id)), next_after: page.nextAfter });
  });
  return router;
}
