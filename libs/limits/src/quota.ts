import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { busLimitsConfig, ConfigOf } from '@bus/config';
import { HttpError } from '@bus/contracts';
import { consumeInOrder, createLimiter, RateLimitedError, type LimitChecks, type Limiter } from './limiter';
import type { LimitMetrics } from './metrics';

/** A connection's allowance on /v1/tenants/{t}/... (docs/api.md#limits). */
export interface Quota {
  perSecond: number;
  burst: number;
  perDay: number;
}

export type QuotaTier = 'minimal' | 'standard' | 'high';

/** The quota tiers of docs/api.md#limits. Each connection gets its tier's whole allowance on its own. */
export const QUOTA_TIERS: Readonly<Record<QuotaTier, Quota>> = {
  minimal: { perSecond: 10, burst: 20, perDay: 25_000 },
  standard: { perSecond: 20, burst: 40, perDay: 100_000 },
  high: { perSecond: 100, burst: 200, perDay: 1_000_000 },
};

/** The operator's ceiling for custom limits (docs/api.md#limits). */
export const CUSTOM_QUOTA_CEILING: Quota = { perSecond: 200, burst: 400, perDay: 10_000_000 };

/** Seconds over which the burst allowance above the rate comes back (a fixed window). */
const BURST_WINDOW_SECONDS = 10;

export class QuotaExceededError extends HttpError {
  override readonly name = 'QuotaExceededError';
  constructor(retryAfterSeconds: number, perDay: number) {
    super(429, 'quota.exceeded', `The daily quota of ${perDay} requests is used up; it resets at midnight UTC`, 'policy', {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** What a request left of one of a connection's windows: `remaining` requests in the next `resetSeconds`. */
export interface WindowLeft {
  remaining: number;
  resetSeconds: number;
}

/**
 * A request counted against a connection's quota, and what it left: of the per-second window
 * (with its burst), and of the day's, absent when the per-second refusal stopped the request before
 * the day was counted.
 */
export type QuotaDecision = { second: WindowLeft; day?: WindowLeft } & (
  { allowed: true } | { allowed: false; rule: 'rate.limited' | 'quota.exceeded'; retryAfterSeconds: number }
);

export interface ConnectionQuotas {
  /**
   * Counts one request of `connectionId` against `quota`: the per-second rate first, then the day.
   * `first` (the host's limits left to this step, takeDeferredHostLimits) are counted before them in
   * the same Redis call; when one of them refuses, nothing after it is counted and this throws the
   * RateLimitedError that counting them alone would have.
   */
  consume(connectionId: string, quota: Quota, now?: Date, first?: LimitChecks): Promise<QuotaDecision>;
}

/**
 * Per-connection quotas in Redis. The quota is an argument, looked up per request, so a tier change
 * applies at the next request with no new credentials. The daily count's key names the UTC day, so
 * it resets at midnight UTC.
 */
export function createConnectionQuotas(redis: Redis, metrics?: LimitMetrics, opts: { factor?: number } = {}): ConnectionQuotas {
  // BUS_LIMIT_CONNECTION_FACTOR: 1 but in a load test.
  const factor = opts.factor ?? 1;
  const rates = new Map<string, Limiter>();
  const days = new Map<string, Limiter>();
  // The limiters are made at a connection's first request; their series exist from the start.
  metrics?.declare('connection_second', 'rate.limited');
  metrics?.declare('connection_day', 'quota.exceeded');

  // One Redis count per connection and window, whatever the quota: a tier change keeps today's count
  // and only moves the threshold. A limiter object is made per distinct quota (its points differ).
  const rateLimiter = (q: Quota): Limiter => {
    const cacheKey = `${q.perSecond}:${q.burst}`;
    let limiter = rates.get(cacheKey);
    if (!limiter) {
      const extra = q.burst - q.perSecond;
      limiter = createLimiter(
        redis,
        {
          name: 'conn-rate',
          label: 'connection_second',
          rate: { points: q.perSecond, durationSeconds: 1 },
          ...(extra > 0 ? { burst: { points: extra, durationSeconds: BURST_WINDOW_SECONDS } } : {}),
        },
        metrics,
      );
      rates.set(cacheKey, limiter);
    }
    return limiter;
  };

  const dayLimiter = (q: Quota, day: string): Limiter => {
    const cacheKey = `${day}:${q.perDay}`;
    let limiter = days.get(cacheKey);
    if (!limiter) {
      // Drop the limiters of earlier days: only today's is ever consulted again.
      for (const key of days.keys()) if (!key.startsWith(`${day}:`)) days.delete(key);
      // Kept a little past midnight; the key names the day, so the count starts at 0 the next day.
      limiter = createLimiter(
        redis,
        { name: `conn-day:${day}`, label: 'connection_day', rule: 'quota.exceeded', rate: { points: q.perDay, durationSeconds: 25 * 3600 } },
        metrics,
      );
      days.set(cacheKey, limiter);
    }
    return limiter;
  };

  return {
    consume: async (connectionId, quota, now = new Date(), first = []) => {
      // One Redis round trip for every window; the day is not counted when the second refuses.
      const decisions = await consumeInOrder([
        ...first,
        [rateLimiter({ ...quota, perSecond: quota.perSecond * factor, burst: quota.burst * factor }), connectionId],
        [dayLimiter(quota, now.toISOString().slice(0, 10)), connectionId],
      ]);
      for (const decision of decisions.slice(0, first.length)) {
        if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
      }
      const [rate, day] = decisions.slice(first.length);
      if (rate === undefined || !rate.allowed) {
        const retryAfterSeconds = rate?.retryAfterSeconds ?? 1;
        return { allowed: false, rule: 'rate.limited', retryAfterSeconds, second: { remaining: 0, resetSeconds: retryAfterSeconds } };
      }
      const second = { remaining: rate.remaining, resetSeconds: rate.resetSeconds };
      // The day's count lives past midnight (its key names the day): its window ends at midnight UTC.
      const midnight = secondsUntilUtcMidnight(now);
      if (day === undefined || !day.allowed) {
        return { allowed: false, rule: 'quota.exceeded', retryAfterSeconds: midnight, second, day: { remaining: 0, resetSeconds: midnight } };
      }
      return { allowed: true, second, day: { remaining: day.remaining, resetSeconds: midnight } };
    },
  };
}

/**
 * The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11) of a
 * request counted against `quota`: the policy "burst" is the per-second rate (q per 1 s; bus-burst,
 * a vendor parameter, is the most a burst may make in one second), "daily" the UTC day's count. The
 * RateLimit items say what the request left of each window, from the counts the limiter returned.
 */
export function rateLimitFields(quota: Quota, decision: QuotaDecision): { 'RateLimit-Policy': string; RateLimit: string } {
  const left = [`"burst";r=${decision.second.remaining};t=${decision.second.resetSeconds}`];
  if (decision.day) left.push(`"daily";r=${decision.day.remaining};t=${decision.day.resetSeconds}`);
  return {
    'RateLimit-Policy': `"burst";q=${quota.perSecond};w=1;bus-burst=${quota.burst}, "daily";q=${quota.perDay};w=86400`,
    RateLimit: left.join(', '),
  };
}

export function secondsUntilUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

/** The connection quotas of a process configured through BUS_LIMIT_* (a factor above 1 is said once, as a warning). */
export function connectionQuotasOf(
  redis: Redis,
  config: Pick<ConfigOf<typeof busLimitsConfig>, 'BUS_LIMIT_CONNECTION_FACTOR'>,
  logger: Logger,
  metrics?: LimitMetrics,
): ConnectionQuotas {
  const factor = config.BUS_LIMIT_CONNECTION_FACTOR;
  if (factor > 1)
    logger.warn({ factor }, "BUS_LIMIT_CONNECTION_FACTOR multiplies every connection's per-second quota: for load tests only, never in a deployment");
  return createConnectionQuotas(redis, metrics, { factor });
}
