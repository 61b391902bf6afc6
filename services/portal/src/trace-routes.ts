import { Router } from 'express';
import { readMessageTrace, type Knex } from '@bus/db';
import { unavailableUnlessDone } from '@bus/http';
import { AdminNotFoundError, AdminUnavailableError } from './errors';

/**
 * The operator's message trace (issue 17, docs/testing-tools.md; busctl `message trace`): the record
 * a producer of the workspace gets at GET /v1/tenants/{t}/messages/{message_id}, for any workspace.
 * Mounted behind the admin API's operator authentication and request validation (service.ts), which
 * checks the ids' forms; never a message body.
 */
export function traceRoutes(deps: { db: Knex }): Router {
  const router = Router();
  router.get('/api/admin/workspaces/:w/messages/:message_id', async (req, res) => {
    const workspaceId = String(req.params.w);
    const messageId = String(req.params.message_id);
    const trace = await unavailableUnlessDone(
      () => readMessageTrace(deps.db, workspaceId, messageId),
      (cause) => new AdminUnavailableError(cause),
    );
    if (!trace) throw new AdminNotFoundError(`accepted message in workspace ${workspaceId} with message_id`, messageId);
    res.json(trace);
  });
  return router;
}
