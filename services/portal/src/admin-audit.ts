import type { NextFunction, Request, Response } from 'express';
import { sourceAddress } from '@bus/limits';
import type { Logger } from '@bus/observability';
import type { AuditedCollection, PeopleStore } from './people';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * The admin path's collection and, past it, the id of the thing it changes (none for a create). An
 * identity provider's bindings are a collection of their own (each names a connection); the providers
 * themselves belong to no organisation.
 */
const TARGET = /^\/api\/admin\/(?:(organisations|workspaces|apps|connections)|identity-providers\/[^/]+\/(bindings))(?:\/([^/]+))?/;

/**
 * Writes an audit entry for every change requested through the admin API, once its answer is sent:
 * the operator's client id (HTTP Basic), the method and path (ids only: no admin path carries a
 * secret, and bodies are never recorded), the source address, the status and the organisation the
 * target belongs to (the house of its workspace), so that organisation's admins read it too. A
 * create's target is the id it answered with. An entry that cannot be written is logged with its
 * cause; the answer has gone already.
 */
export function adminAudit(people: PeopleStore, operatorClientId: string, logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READS.has(req.method)) {
      next();
      return;
    }
    const path = req.originalUrl.split('?')[0]!.slice(0, 300);
    const named = TARGET.exec(path);
    const collection = (named?.[1] ?? named?.[2]) as AuditedCollection | undefined;
    const targetId = named?.[3];
    // Looked up before the change runs (the change waits for it), so a removal's entry still names
    // the organisation: started alongside the change, the lookup could read after the row was gone.
    const before = collection && targetId ? organisationOf(collection, targetId) : Promise.resolve(null);
    let created: string | undefined;
    if (named && targetId === undefined) {
      // A create names its new id only in its answer: that id is kept, nothing else of the body (a
      // new connection's answer carries its secret).
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        created = createdIdOf(body);
        return json(body);
      };
    }
    res.once('finish', () => {
      const organisation = collection && created ? organisationOf(collection, created) : before;
      organisation
        .then((organisationId) =>
          people.audit({
            actorKind: 'operator_basic',
            actor: operatorClientId,
            action: `${req.method} ${path}`,
            target: created ?? path,
            organisationId,
            sourceAddress: sourceAddress(req),
            requestId: typeof res.locals.requestId === 'string' ? res.locals.requestId : null,
            status: res.statusCode,
          }),
        )
        .catch((err: unknown) => logger.error({ err, request_id: res.locals.requestId }, 'audit entry of an admin change not written'));
    });
    // organisationOf never rejects: a failed lookup is logged and names no organisation.
    void before.then(() => next());
  };

  function organisationOf(collection: AuditedCollection, id: string): Promise<string | null> {
    return people.organisationOfTarget(collection, id).catch((err: unknown) => {
      logger.error({ err }, 'organisation of an audited admin change not found; its entry names none');
      return null;
    });
  }
}

/** The id a create answered with: an organisation's, workspace's, app's or binding's `id`, a connection's `client_id`. */
function createdIdOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { id, client_id: clientId } = body as { id?: unknown; client_id?: unknown };
  return typeof id === 'string' ? id : typeof clientId === 'string' ? clientId : undefined;
}
