import { preparedQuery, type Knex } from '@bus/db';
import type { Logger } from 'pino';

/**
 * Records that a connection was used (a token issued for it, a publish, a receive) in
 * connections.last_used_at, to the minute: at most one UPDATE per connection per minute from this
 * process, and the statement itself skips a row written in the last minute by any process. The
 * request that used the connection never waits for it, and never fails by it (a failure is logged).
 */
export interface ConnectionUse {
  /** Settles once written or skipped, and never rejects: a request goes on without awaiting it. */
  used(connectionId: string): Promise<void>;
}

/** last_used_at's precision (docs/api.md#connections-and-credentials). */
export const LAST_USED_PRECISION_MS = 60_000;

/** Connections remembered at once: past it, those not written within the interval are forgotten first. */
const REMEMBERED_MAX = 10_000;

const TOUCH = `UPDATE connections SET last_used_at = now()
  WHERE id = :id AND (last_used_at IS NULL OR last_used_at < now() - (:precisionMs * interval '1 millisecond'))`;

export interface ConnectionUseDeps {
  db: Knex;
  logger: Logger;
  /** The clock of the in-process throttle; tests pass a controllable one. */
  now?: () => number;
}

export function createConnectionUse(deps: ConnectionUseDeps): ConnectionUse {
  const now = deps.now ?? Date.now;
  const writtenAt = new Map<string, number>();
  const forgetOld = (at: number) => {
    for (const [id, written] of writtenAt) if (at - written >= LAST_USED_PRECISION_MS) writtenAt.delete(id);
    // Every one written within the minute: the throttle starts over rather than grow without bound.
    if (writtenAt.size >= REMEMBERED_MAX) writtenAt.clear();
  };
  return {
    used(connectionId) {
      const at = now();
      const written = writtenAt.get(connectionId);
      if (written !== undefined && at - written < LAST_USED_PRECISION_MS) return Promise.resolve();
      if (written === undefined && writtenAt.size >= REMEMBERED_MAX) forgetOld(at);
      writtenAt.set(connectionId, at);
      return preparedQuery(deps.db, 'identity.connection_used', TOUCH, { id: connectionId, precisionMs: LAST_USED_PRECISION_MS }).then(
        () => undefined,
        (err: unknown) => {
          // Tried again on the next use after a minute; the use itself went on.
          deps.logger.warn({ err, connection_id: connectionId }, 'last_used_at of the connection not recorded');
        },
      );
    },
  };
}
