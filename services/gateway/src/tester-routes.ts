import { once } from 'node:events';
import type { Router, Request, RequestHandler, Response } from 'express';
import { readRecentRefusals, readStory, type Knex } from '@bus/db';
import { readMessageTrace } from '@bus/queue';
import {
  createRouter,
  DependencyUnavailableError,
  RequestInvalidError,
  ResourceUnknownError,
  requestValidation,
  unavailableUnlessDone,
  validatedQuery,
} from '@bus/http';
import type { BearerAuthenticator, BearerIdentity } from '@bus/identity';
import { canonicalUuid, RULES } from '@bus/som';
import { storyExportLines } from '@bus/queue';
import { openapi } from '@bus/schemas';

/** 503 records.unavailable: Postgres failed while a tester route read; `cause` is its error, which the error middleware logs. */
export class RecordsUnavailableError extends DependencyUnavailableError {
  override readonly name = 'RecordsUnavailableError';
  constructor(cause: unknown) {
    super('records.unavailable', RULES['records.unavailable'].description, cause);
  }
}

export interface TesterRoutesDeps {
  authenticator: BearerAuthenticator;
  /** The per-connection quota of docs/api.md#limits: these routes are under /v1/tenants/{t} too. */
  connectionQuota: RequestHandler;
  db: Knex;
}

/**
 * The producer's read-only tester routes (docs/testing-tools.md), with the publish routes'
 * authentication (a producer token of workspace {t}: a consumer token is 403 producer.not_registered,
 * another workspace's 403 tenant.mismatch) and quota:
 * - GET /v1/tenants/{t}/messages/{message_id}: where an accepted message is, per consumer connection;
 * - GET /v1/tenants/{t}/refusals: the calling connection's recent refusals;
 * - GET /v1/tenants/{t}/stories/{correlation_id}: the story state and accepted messages of a correlation id;
 * - GET /v1/tenants/{t}/stories/{correlation_id}/export: the same with the messages' bytes and every consumer's
 *   copy, as NDJSON: the one tester route that carries bodies, those the workspace's producers published.
 */
export function testerRoutes(deps: TesterRoutesDeps): Router {
  const router = createRouter();
  const producer = deps.authenticator.authenticateBearer({ kind: 'producer' });
  const requests = requestValidation(openapi.bus, (problem) => new RequestInvalidError(problem));
  const guards = [producer, deps.connectionQuota, requests.parameters];
  const read = <T>(work: () => Promise<T>) => unavailableUnlessDone(work, (cause) => new RecordsUnavailableError(cause));
  const workspaceOf = (res: Response) => (res.locals.identity as BearerIdentity).workspaceId;

  router.get('/v1/tenants/:t/messages/:message_id', ...guards, async (req: Request, res: Response) => {
    // Accepted ids are canonical (lower case, no urn:uuid:), so every spelling of one finds its message.
    const messageId = canonicalUuid(String(req.params.message_id));
    const trace = await read(() => readMessageTrace(deps.db, workspaceOf(res), messageId));
    if (!trace) throw new ResourceUnknownError('message.unknown', `The workspace accepted no message ${messageId}`);
    res.json(trace);
  });

  router.get('/v1/tenants/:t/refusals', ...guards, async (req: Request, res: Response) => {
    const query = validatedQuery(req) as { limit: number; before?: number };
    res.json(await read(() => readRecentRefusals(deps.db, (res.locals.identity as BearerIdentity).clientId, query)));
  });

  const storyOf = async (req: Request, res: Response) => {
    const correlationId = String(req.params.correlation_id);
    const story = await read(() => readStory(deps.db, workspaceOf(res), correlationId));
    if (!story) throw new ResourceUnknownError('story.unknown', `The workspace holds nothing for correlation id ${correlationId}`);
    return story;
  };

  router.get('/v1/tenants/:t/stories/:correlation_id', ...guards, async (req: Request, res: Response) => {
    res.json(await storyOf(req, res));
  });

  // Streamed a line at a time, waiting for the client to drain, so an export holds one page of bodies in memory.
  // A read failing after the first line ends the connection without the `end` line (docs/testing-tools.md#story-export).
  router.get('/v1/tenants/:t/stories/:correlation_id/export', ...guards, async (req: Request, res: Response) => {
    const story = await storyOf(req, res);
    res.status(200).type('application/x-ndjson');
    for await (const line of storyExportLines(deps.db, workspaceOf(res), story, new Date(), read)) {
      if (!res.write(line)) await once(res, 'drain');
    }
    res.end();
  });
  return router;
}
