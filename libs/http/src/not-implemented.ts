import { Router } from 'express';
import { NotImplementedError } from './errors';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'all';

/**
 * Routes of the contract whose implementation has not landed yet. They answer 501 in the app's error
 * shape, so a caller learns the route exists and does not work yet, instead of a misleading 404.
 */
export function notImplementedRouter(routes: ReadonlyArray<readonly [Method, string]>): Router {
  const router = Router();
  for (const [method, path] of routes) {
    router[method](path, (req) => {
      throw new NotImplementedError(`${req.method} ${path}`);
    });
  }
  return router;
}
