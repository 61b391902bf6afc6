import { Router } from 'express';
import { MESSAGE_TYPES, SOM_VERSION } from '@bus/som';

/** GET /v1/health (spec 2.5): unauthenticated; what the bus implements, not whether it is ready. */
export function healthRouter(): Router {
  const body = { ok: true, som_version: SOM_VERSION, message_types: [...MESSAGE_TYPES] };
  const router = Router();
  router.get('/v1/health', (_req, res) => {
    res.json(body);
  });
  return router;
}
