import type { Router, Request, Response } from 'express';
import type { DeadLetterResolution, QueueOperations } from '@bus/contracts';
import type { RequestValidation } from '@bus/http';
import type { IdentityAdmin } from '@bus/identity';
import { identityCall } from './admin-routes';
import { purgeConsumerQueue, resolveOpenDeadLetter } from './consumer-queues';
import type { AdminStore, ConnectionView } from './admin-store';
import { AdminConflictError, AdminNotFoundError } from './errors';
import { createRouter } from '@bus/http';

/** What the consumer tools' routes ask of the queues (libs/queue queueOperations). */
export type DeadLetterOperations = Pick<QueueOperations, 'deadLetters' | 'resolveDeadLetter' | 'purge'>;

/** The environment this bus serves: fault injection is a Sandbox tool (docs/testing-tools.md). */
export type BusEnvironment = 'sandbox' | 'preview';

export interface ConsumerToolsRoutesDeps {
  admin: IdentityAdmin;
  store: AdminStore;
  queues: DeadLetterOperations;
  requests: RequestValidation;
  environment: BusEnvironment;
}

/** #/components/schemas/ConsumerFaults and DeadLetterPolicy of admin.json, as validated. */
interface FaultsBody {
  duplicate_rate: number;
  delay_ms: number;
  early_expiry_rate: number;
}
interface DeadLetterPolicyBody {
  max_receives: number | null;
}

const BODY_BYTES = 4 * 1024;

/**
 * The operator's consumer tools (docs/testing-tools.md, docs/admin.md): a consumer
 * connection's fault injection (Sandbox only) and dead-letter threshold, shown on the connection;
 * its dead letters, redriven or discarded one at a time; its queue purged. Mounted behind the admin API's operator
 * authentication and parameter validation (service.ts).
 */
export function consumerToolsRoutes(deps: ConsumerToolsRoutesDeps): Router {
  const router = createRouter();
  const consumer = async (req: Request, opts: { active: boolean }): Promise<ConnectionView> => {
    const id = String(req.params.c);
    const connection = (await deps.store.connection(id)) ?? notFound('connection', id);
    if (connection.kind !== 'consumer') throw new AdminConflictError(`Connection ${id} is a producer; consumer tools are for consumer connections`);
    if (opts.active && connection.status !== 'active') throw new AdminConflictError(`Connection ${id} is ${connection.status}`);
    return connection;
  };
  const settingsChanged = async (clientId: string) => (await deps.store.connection(clientId)) ?? notFound('connection', clientId);

  router.put('/api/admin/connections/:c/faults', async (req, res) => {
    const connection = await consumer(req, { active: true });
    const body = (await deps.requests.jsonBody(req, BODY_BYTES)) as FaultsBody;
    const on = body.duplicate_rate > 0 || body.delay_ms > 0 || body.early_expiry_rate > 0;
    if (on && deps.environment !== 'sandbox')
      throw new AdminConflictError(`Fault injection is a Sandbox tool; this bus is ${deps.environment} (BUS_ENVIRONMENT)`);
    const faults = { duplicateRate: body.duplicate_rate, delayMs: body.delay_ms, earlyExpiryRate: body.early_expiry_rate };
    await identityCall(() => deps.admin.setConsumerTools(connection.client_id, { faults }));
    res.json(await settingsChanged(connection.client_id));
  });

  router.put('/api/admin/connections/:c/dead-letter-policy', async (req, res) => {
    const connection = await consumer(req, { active: true });
    const body = (await deps.requests.jsonBody(req, BODY_BYTES)) as DeadLetterPolicyBody;
    await identityCall(() => deps.admin.setConsumerTools(connection.client_id, { maxReceives: body.max_receives }));
    res.json(await settingsChanged(connection.client_id));
  });

  router.get('/api/admin/connections/:c/dead-letters', async (req, res) => {
    const connection = await consumer(req, { active: false });
    res.json({ client_id: connection.client_id, ...(await deps.queues.deadLetters(connection.client_id)) });
  });

  const resolve = (resolution: DeadLetterResolution) => async (req: Request, res: Response) => {
    const connection = await consumer(req, { active: false });
    const resolved = await resolveOpenDeadLetter(deps.queues, connection, String(req.params.d), resolution);
    res.json(resolved);
  };
  router.post('/api/admin/connections/:c/dead-letters/:d/redrive', resolve('redriven'));
  router.post('/api/admin/connections/:c/dead-letters/:d/discard', resolve('discarded'));
  router.post('/api/admin/connections/:c/purge', async (req, res) => {
    const connection = (await deps.store.connection(String(req.params.c))) ?? notFound('connection', String(req.params.c));
    res.json(await purgeConsumerQueue(deps.queues, connection));
  });
  return router;
}

function notFound(what: string, id: string): never {
  throw new AdminNotFoundError(what, id);
}
