import type { Router } from 'express';
import type { RequestValidation } from '@bus/http';
import type { ReplayBody } from '../admin-requests';
import type { SimulationRequest } from '../simulations';
import { requireSession } from './sign-in';
import type { TestMessageRequest, ToolsData } from './tools-data';
import { createRouter, validatedQuery } from '@bus/http';

const BODY_BYTES = 4 * 1024;
/** A test message is at most the bus's 240,000 bytes; as a JSON string its escapes may double it. */
const TEST_MESSAGE_BODY_BYTES = 512 * 1024;

/**
 * The portal API's consumer and testing tools (schemas/openapi/portal.json; docs/portal.md): a consumer
 * connection's queue stats, its messages (waiting, in flight; purge) and dead letters (redrive, discard), its replays and their progress, a message's trace, a producer's recent
 * refusals, a test message and the simulated producer. Behind the session and CSRF checks (sign-in.ts) and the document's parameter checks.
 */
export function toolsRoutes(deps: { tools: ToolsData; requests: RequestValidation }): Router {
  const router = createRouter();
  router.get('/api/portal/connections/:c/queue', async (req, res) => {
    res.json(await deps.tools.queue(requireSession(res), String(req.params.c)));
  });
  router.get('/api/portal/connections/:c/messages', async (req, res) => {
    res.json(await deps.tools.messages(requireSession(res), String(req.params.c)));
  });
  router.get('/api/portal/connections/:c/dead-letters', async (req, res) => {
    res.json(await deps.tools.deadLetters(requireSession(res), String(req.params.c)));
  });
  for (const [verb, resolution] of [
    ['redrive', 'redriven'],
    ['discard', 'discarded'],
  ] as const)
    router.post(`/api/portal/connections/:c/dead-letters/:d/${verb}`, async (req, res) => {
      res.json(await deps.tools.resolveDeadLetter(req, res, requireSession(res), String(req.params.c), String(req.params.d), resolution));
    });
  router.post('/api/portal/connections/:c/purge', async (req, res) => {
    res.json(await deps.tools.purge(req, res, requireSession(res), String(req.params.c)));
  });
  router.post('/api/portal/connections/:c/replays', async (req, res) => {
    const readBody = async () => (await deps.requests.jsonBody(req, BODY_BYTES)) as ReplayBody;
    res.status(202).json(await deps.tools.startReplay(req, res, requireSession(res), String(req.params.c), readBody));
  });
  router.get('/api/portal/connections/:c/replays/estimate', async (req, res) => {
    res.json(await deps.tools.replayEstimate(requireSession(res), String(req.params.c), String(req.query.since)));
  });
  router.get('/api/portal/replays/:p', async (req, res) => {
    res.json(await deps.tools.replay(requireSession(res), String(req.params.p)));
  });
  router.post('/api/portal/connections/:c/simulations', async (req, res) => {
    const readBody = async () => (await deps.requests.jsonBody(req, BODY_BYTES)) as SimulationRequest;
    res.status(202).json(await deps.tools.startSimulation(req, res, requireSession(res), String(req.params.c), readBody));
  });
  router.post('/api/portal/connections/:c/test-messages', async (req, res) => {
    const readBody = async () => (await deps.requests.jsonBody(req, TEST_MESSAGE_BODY_BYTES)) as TestMessageRequest;
    res.json(await deps.tools.testMessage(req, res, requireSession(res), String(req.params.c), readBody));
  });
  router.get('/api/portal/simulations/:s', async (req, res) => {
    res.json(await deps.tools.simulation(requireSession(res), String(req.params.s)));
  });
  router.get('/api/portal/workspaces/:w/messages/:message_id', async (req, res) => {
    res.json(await deps.tools.trace(requireSession(res), String(req.params.w), String(req.params.message_id)));
  });
  router.get('/api/portal/connections/:c/refusals', async (req, res) => {
    const query = validatedQuery(req);
    const filter = {
      ...(typeof query.rule === 'string' ? { rule: query.rule } : {}),
      ...(typeof query.q === 'string' ? { text: query.q } : {}),
    };
    res.json(await deps.tools.refusals(requireSession(res), String(req.params.c), filter));
  });
  return router;
}
