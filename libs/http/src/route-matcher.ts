import type { Request } from 'express';
import { match } from 'path-to-regexp';

/** A route by method and express path pattern, e.g. `POST /v1/tenants/:t/messages`. */
export interface RouteKey {
  method: 'GET' | 'POST';
  path: string;
}

/**
 * Whether a request is for one of `routes`, matched as express's router matches a route's path (case
 * insensitive, an optional trailing slash; HEAD is answered by a GET route), for middleware that runs
 * before the routers (the host's limits, which leave the bearer routes' counting to their quota step).
 */
export function routeMatcher(routes: readonly RouteKey[]): (req: Request) => boolean {
  const matchers = routes.map((r) => ({ method: r.method, matches: match(r.path, { sensitive: false, end: true, trailing: true }) }));
  return (req) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    return matchers.some((m) => m.method === method && m.matches(req.path) !== false);
  };
}
