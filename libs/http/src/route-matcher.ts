import type { Request } from 'express';
import { match } from 'path-to-regexp';

/** A route by method and express path pattern, e.g. `POST /v1/tenants/:t/messages`. */
export interface RouteKey {
  method: 'GET' | 'POST';
  path: string;
}

/**
 * Whether a request is for one of `routes`, matched as the bus's routers match a route's path (exactly:
 * case-sensitive, no optional trailing slash; HEAD is answered by a GET route), for middleware that runs
 * before the routers (the host's limits, which leave the bearer routes' counting to their quota step).
 */
export function routeMatcher(routes: readonly RouteKey[]): (req: Request) => boolean {
  // decode: false: only whether the path matches is asked, and decoding a parameter throws on a
  // malformed escape (%ZZ), which a caller outside the app's own checks may hand in.
  const matchers = routes.map((r) => ({ method: r.method, matches: match(r.path, { sensitive: true, end: true, trailing: false, decode: false }) }));
  return (req) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    return matchers.some((m) => m.method === method && m.matches(req.path) !== false);
  };
}
