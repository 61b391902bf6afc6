import { Router } from 'express';

/**
 * A router that matches a path only as the OpenAPI documents spell it: case-sensitive and without
 * express's optional trailing slash. `/V1/…` or `…/messages/` is then a 404 like any unknown path,
 * never a route the request validation has no operation for. Every router of the bus comes from here.
 */
export function createRouter(): Router {
  return Router({ caseSensitive: true, strict: true });
}
