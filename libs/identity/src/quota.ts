import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { routeMatcher, type RouteKey } from '@bus/http';
import type { Knex, Row } from '@bus/db';
import {
  QUOTA_TIERS,
  QuotaExceededError,
  RateLimitedError,
  rateLimitFields,
  takeDeferredHostLimits,
  type ConnectionQuotas,
  type CountWithQuota,
  type Quota,
} from '@bus/limits';
import { unavailableOnFailure, type BearerIdentity, type VerifiedBearerTokens } from './authenticate';

export interface QuotaStore {
  /** The connection's quota: its workspace's, or its vendor organisation's for a vendor's app (docs/api.md#limits). */
  quota(connectionId: string): Promise<Quota>;
}

/** The quota columns of an organisation or a workspace (migration 001). */
export type QuotaColumns = Pick<Row<'organisations' | 'workspaces'>, 'quota_tier' | 'custom_per_second' | 'custom_burst' | 'custom_per_day'>;

/** The allowance the columns give: a named tier's of docs/api.md#limits, or the custom limits as stored. */
export function quotaOfColumns(row: QuotaColumns): Quota {
  if (row.quota_tier !== 'custom') return QUOTA_TIERS[row.quota_tier];
  return { perSecond: Number(row.custom_per_second), burst: Number(row.custom_burst), perDay: Number(row.custom_per_day) };
}

/**
 * Reads the quota tier behind a connection from the tenancy tables. One place for every bearer route
 * (publish, the consumer routes), so the vendor-versus-house rule cannot drift between services.
 */
export class KnexQuotaStore implements QuotaStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexQuotaStore {
    return new KnexQuotaStore(db);
  }

  async quota(connectionId: string): Promise<Quota> {
    // The app's owner decides: the house's own apps use the workspace's tier, a vendor's apps the
    // vendor organisation's (decisions.md, "Quotas on organisations and workspaces").
    const own = (column: string) => this.db.raw(`case when a.organisation_id = w.organisation_id then w.${column} else o.${column} end as ${column}`);
    // A join of four tables: knex types single tables only, so the selection is declared.
    const row = await this.db('connections as c')
      .join('apps as a', 'a.id', 'c.app_id')
      .join('workspaces as w', 'w.id', 'a.workspace_id')
      .join('organisations as o', 'o.id', 'a.organisation_id')
      .where('c.id', connectionId)
      .first<QuotaColumns | undefined>(own('quota_tier'), own('custom_per_second'), own('custom_burst'), own('custom_per_day'));
    if (!row) throw new Error(`connection ${connectionId} has no quota row`);
    return quotaOfColumns(row);
  }
}

export interface ConnectionQuotaDeps {
  store: QuotaStore;
  quotas: ConnectionQuotas;
}

/**
 * Express middleware after authenticateBearer: counts the request against the caller's connection
 * quota (docs/api.md#limits). Give it the identity's cached store (Identity.quotas): a tier change reaches it
 * through the control topic within seconds, as credential changes do. Mount it before anything reads
 * the body. Every answer after it, a 429 included, carries the RateLimit-Policy and RateLimit fields
 * of what the request left. 429 rate.limited (per second) or quota.exceeded (per day, Retry-After to
 * midnight UTC); an unreadable quota is 503 registry.unavailable. The host's limits, when
 * busRequestLimits left them here, are counted first in the same Redis call: their refusal is the 429
 * busRequestLimits would have answered, without the connection's fields (its windows were not counted).
 */
export function connectionQuota(deps: ConnectionQuotaDeps): RequestHandler {
  return async (_req: Request, res: Response, next: NextFunction) => {
    const { clientId } = res.locals.identity as BearerIdentity;
    const quota = await unavailableOnFailure(() => deps.store.quota(clientId));
    // The host's limits, when busRequestLimits left them to this step, go first in the same Redis call.
    const decision = await deps.quotas.consume(clientId, quota, undefined, takeDeferredHostLimits(res));
    res.set(rateLimitFields(quota, decision));
    if (!decision.allowed) {
      throw decision.rule === 'quota.exceeded'
        ? new QuotaExceededError(decision.retryAfterSeconds, quota.perDay)
        : new RateLimitedError(decision.retryAfterSeconds, "The connection's per-second limit is exceeded");
    }
    next();
  };
}

/**
 * busRequestLimits' countWithQuota: a request for one of `routes` (each authenticates a bearer token,
 * then runs connectionQuota) with a token this process already verified has its host limits counted in
 * the quota's Redis call. An unknown token's request is counted at once, before any signature check.
 */
export function hostLimitsWithQuota(tokens: VerifiedBearerTokens, routes: readonly RouteKey[]): CountWithQuota {
  const isRoute = routeMatcher(routes);
  return (req) => isRoute(req) && tokens.holdsVerifiedToken(req.header('authorization'));
}
