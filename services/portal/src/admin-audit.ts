import type { NextFunction, Request, Response } from 'express';
import { sourceAddress } from '@bus/limits';
import type { Logger } from '@bus/observability';
import type { PeopleStore } from './people';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Writes an audit entry for every change requested through the admin API, once its answer is sent:
 * the operator's client id (HTTP Basic), the method and path (ids only: no admin path carries a
 * secret, and bodies are never recorded), the source address and the status. An entry that cannot be
 * written is logged with its cause; the answer has gone already.
 */
export function adminAudit(people: PeopleStore, operatorClientId: string, logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!READS.has(req.method)) {
      const action = `${req.method} ${req.originalUrl.split('?')[0]!.slice(0, 300)}`;
      res.once('finish', () => {
        people
          .audit({
            actorKind: 'operator_basic',
            actor: operatorClientId,
            action,
            target: req.originalUrl.split('?')[0]!.slice(0, 300),
            organisationId: null,
            sourceAddress: sourceAddress(req),
            requestId: typeof res.locals.requestId === 'string' ? res.locals.requestId : null,
            status: res.statusCode,
          })
          .catch((err: unknown) => logger.error({ err, request_id: res.locals.requestId }, 'audit entry of an admin change not written'));
      });
    }
    next();
  };
}
