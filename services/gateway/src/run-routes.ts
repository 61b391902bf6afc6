import type { Router, Request, RequestHandler, Response } from 'express';
import { runReportFiles, type RunReport, type TestRun } from '@bus/client';
import { openTestRun, readRunRecords, readTestRun, RUN_DURATION_MAX_SECONDS, RUN_REPORT_MESSAGES_MAX, stopTestRun, type Knex } from '@bus/db';
import { createRouter, RequestInvalidError, ResourceUnknownError, requestValidation, unavailableUnlessDone, validatedQuery } from '@bus/http';
import type { BearerAuthenticator, BearerIdentity } from '@bus/identity';
import { readRunDeliveries } from '@bus/queue';
import { openapi } from '@bus/schemas';
import { RecordsUnavailableError } from './tester-routes';
import type { OpenRuns } from './open-runs';

export interface RunRoutesDeps {
  authenticator: BearerAuthenticator;
  connectionQuota: RequestHandler;
  db: Knex;
  /** Told when a run opens or stops, so this gateway's validates see it at once. */
  openRuns: Pick<OpenRuns, 'forget'>;
}

/** A run's opening body is a label and a duration: well under this. */
const RUN_BODY_BYTES = 4096;

/**
 * Test runs (docs/testing-tools.md#test-runs), for any connection of workspace {t}, producer or
 * consumer (a tester drives both sides), with the tester routes' quota and refusals: another
 * workspace's token 403 tenant.mismatch, none 401. A run stores its label and window only; its report
 * is read from the acceptances, refusals and deliveries the bus records anyway.
 */
export function runRoutes(deps: RunRoutesDeps): Router {
  const router = createRouter();
  const anyConnection = deps.authenticator.authenticateBearer({});
  const requests = requestValidation(openapi.bus, (problem) => new RequestInvalidError(problem));
  const guards = [anyConnection, deps.connectionQuota, requests.parameters];
  const read = <T>(work: () => Promise<T>) => unavailableUnlessDone(work, (cause) => new RecordsUnavailableError(cause));
  const identityOf = (res: Response) => res.locals.identity as BearerIdentity;
  const known = (run: TestRun | null, runId: string): TestRun => {
    if (!run) throw new ResourceUnknownError('run.unknown', `The workspace has no test run ${runId}`);
    return run;
  };

  router.post('/v1/tenants/:t/runs', ...guards, async (req: Request, res: Response) => {
    const body = (await requests.jsonBody(req, RUN_BODY_BYTES)) as { label: string; duration_seconds?: number };
    const identity = identityOf(res);
    const run = await read(() =>
      openTestRun(deps.db, {
        workspaceId: identity.workspaceId,
        label: body.label,
        openedBy: identity.clientId,
        durationSeconds: body.duration_seconds ?? RUN_DURATION_MAX_SECONDS,
      }),
    );
    deps.openRuns.forget(identity.workspaceId);
    res.status(201).json(run);
  });

  router.get('/v1/tenants/:t/runs/:run_id', ...guards, async (req: Request, res: Response) => {
    const runId = String(req.params.run_id);
    res.json(known(await read(() => readTestRun(deps.db, identityOf(res).workspaceId, runId)), runId));
  });

  router.post('/v1/tenants/:t/runs/:run_id/stop', ...guards, async (req: Request, res: Response) => {
    const runId = String(req.params.run_id);
    deps.openRuns.forget(identityOf(res).workspaceId);
    res.json(known(await read(() => stopTestRun(deps.db, identityOf(res).workspaceId, runId)), runId));
  });

  router.get('/v1/tenants/:t/runs/:run_id/report', ...guards, async (req: Request, res: Response) => {
    const runId = String(req.params.run_id);
    const { format } = validatedQuery(req) as { format: 'json' | 'junit' | 'ctrf' };
    const now = new Date();
    const run = known(await read(() => readTestRun(deps.db, identityOf(res).workspaceId, runId, now)), runId);
    const report = await read(async () => {
      const { accepted, consumers, ...records } = await readRunRecords(deps.db, run, now);
      const to = new Date(Math.min(new Date(run.ends_at).getTime(), now.getTime())).toISOString();
      return {
        run,
        window: { from: run.started_at, to },
        ...records,
        messages_max: RUN_REPORT_MESSAGES_MAX,
        consumers: await readRunDeliveries(deps.db, run.workspace_id, consumers, accepted),
      } satisfies RunReport;
    });
    if (format === 'json') {
      res.json(report);
      return;
    }
    const files = runReportFiles(report);
    if (format === 'junit') res.type('application/xml').send(files.junit);
    else res.type('application/json').send(files.ctrf);
  });
  return router;
}
