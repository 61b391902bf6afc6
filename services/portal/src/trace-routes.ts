import type { Router } from 'express';
import type { Knex } from '@bus/db';
import { readMessageTrace, type MessageTrace } from '@bus/queue';
import { createRouter, unavailableUnlessDone } from '@bus/http';
import { AdminNotFoundError, AdminUnavailableError } from './errors';

/**
 * The operator's message trace (docs/testing-tools.md; busctl `message trace`): the record
 * a producer of the workspace gets at GET /v1/tenants/{t}/messages/{message_id}, for any workspace.
 * Mounted behind the admin API's operator authentication and request validation (service.ts), which
 * checks the ids' forms; never a message body.
 */
export function traceRoutes(deps: { db: Knex }): Router {
  const router = createRouter();
  router.get('/api/admin/workspaces/:w/messages/:message_id', async (req, res) => {
    res.json(await messageTraceOf(deps.db, String(req.params.w), String(req.params.message_id)));
  });
  return router;
}

/** The trace of an accepted message of the workspace (the admin API's and the portal's): 404 admin.not_found, 503 admin.unavailable. */
export async function messageTraceOf(db: Knex, workspaceId: string, messageId: string): Promise<MessageTrace> {
  const trace = await unavailableUnlessDone(
    () => readMessageTrace(db, workspaceId, messageId),
    (cause) => new AdminUnavailableError(cause),
  );
  if (!trace) throw new AdminNotFoundError(`accepted message in workspace ${workspaceId} with message_id`, messageId);
  return trace;
}
