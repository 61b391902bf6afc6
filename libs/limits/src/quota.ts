import type { Redis } from 'ioredis';
import { HttpError } from '@bus/http';
import { createLimiter, type Limiter } from './limiter';
import type { LimitMetrics } from './metrics';

/** A connection's allowance on /v1/tenants/{t}/... (spec §8). */
export interface Quota {
  perSecond: number;
  burst: number;
  perDay: number;
}

export type QuotaTier = 'minimal' | 'standard' | 'high';

/** Spec §8's tiers. Each connection gets its tier's whole allowance on its own. */
export const QUOTA_TIERS: Readonly<Record<QuotaTier, Quota>> = {
  minimal: { perSecond: 10, burst: 20, perDay: 25_000 },
  standard: { perSecond: 20, burst: 40, perDay: 100_000 },
  high: { perSecond: 100, burst: 200, perDay: 1_000_000 },
};

/** The operator's ceiling for custom limits (spec §8). */
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

export type QuotaDecision = { allowed: true } | { allowed: false; rule: 'rate.limited' | 'quota.exceeded'; retryAfterSeconds: number };

export interface ConnectionQuotas {
  /** Counts one request of `connectionId` against `quota`: the per-second rate first, then the day. */
  consume(connectionId: string, quota: Quota, now?: Date): Promise<QuotaDecision>;
}

/**
 * Per-connection quotas in Redis. The quota is an argument, looked up per request, so a tier change
 * applies at the next request with no new credentials. The daily count's key names the UTC day, so
 * it resets at midnight UTC.
 */
export function createConnectionQuotas(redis: Redis, metrics?: LimitMetrics): ConnectionQuotas {
  const rates = new Map<string, Limiter>();
  const days = new Map<string, Limiter>();

  // One Redis count per connection and window, whatever the quota: a tier change keeps today's count
  // and only moves the threshold. A limiter object is made per distinct quota (its points differ).
  const rateLimiter = (q: Quota): Limiter => {
    const cacheKey = `${q.perSecond}:${q.burst}`;
    let limiter = rates.get(cacheKey);
    if (!limiter) {
      const extra = q.burst - q.perSecond;
      limiter = createLimiter(redis, {
        name: 'conn-rate',
        label: 'connection_second',
        rate: { points: q.perSecond, durationSeconds: 1 },
        ...(extra > 0 ? { burst: { points: extra, durationSeconds: BURST_WINDOW_SECONDS } } : {}),
      }, metrics);
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
    consume: async (connectionId, quota, now = new Date()) => {
      const rate = await rateLimiter(quota).consume(connectionId);
      if (!rate.allowed) return { allowed: false, rule: 'rate.limited', retryAfterSeconds: rate.retryAfterSeconds };
      const day = await dayLimiter(quota, now.toISOString().slice(0, 10)).consume(connectionId);
      if (!day.allowed) return { allowed: false, rule: 'quota.exceeded', retryAfterSeconds: secondsUntilUtcMidnight(now) };
      return { allowed: true };
    },
  };
}

export function secondsUntilUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}
