import type { NextFunction, Request, Response } from 'express';
import { AdminPreconditionFailedError } from './errors';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * RFC 9110 §13.1: a server evaluates a change's preconditions before it performs it. The admin API
 * keeps no entity tags and no modification dates (a write is last writer wins, docs/admin.md), so:
 * If-Match other than `*` can never hold; If-None-Match: * on a PUT targets a resource that exists
 * (every PUT of the API changes one); If-Unmodified-Since is ignored, as RFC 9110 says for a resource
 * with no modification date.
 */
export function refuseUnmetPreconditions(req: Request, _res: Response, next: NextFunction): void {
  if (SAFE.has(req.method)) return next();
  const ifMatch = req.header('if-match')?.trim();
  if (ifMatch !== undefined && ifMatch !== '*')
    return next(new AdminPreconditionFailedError('If-Match cannot hold: the admin API keeps no entity tags; send the change without it'));
  if (req.method === 'PUT' && req.header('if-none-match')?.trim() === '*')
    return next(new AdminPreconditionFailedError('If-None-Match: * cannot hold: every PUT of the admin API changes a resource that exists'));
  next();
}
