import type { Router } from 'express';
import { createRouter, cacheableJson, DOCUMENT_CACHE_CONTROL, sendCacheable } from '@bus/http';
import { openapi } from '@bus/schemas';
import { MESSAGE_TYPES, SOM_VERSION } from '@bus/som';

/**
 * GET /v1/health (docs/api.md#health): unauthenticated; what the bus implements, not whether it is ready.
 * GET /v1/openapi.json: the OpenAPI 3.1 document of the bus host, with an ETag to revalidate.
 */
export function discoveryRouter(): Router {
  const health = { ok: true, som_version: SOM_VERSION, message_types: [...MESSAGE_TYPES] };
  const document = cacheableJson(openapi.bus);
  const router = createRouter();
  router.get('/v1/health', (_req, res) => {
    res.json(health);
  });
  router.get('/v1/openapi.json', (req, res) => {
    sendCacheable(req, res, document, DOCUMENT_CACHE_CONTROL);
  });
  return router;
}
