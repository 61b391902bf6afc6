import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { HttpError } from '@bus/http';
import type { LimitMetrics } from './metrics';

export interface Window {
  points: number;
  durationSeconds: number;
}

export interface LimitSpec {
  /** Names the limit in Redis keys (`limit:<name>:<key>`); stable, it is shared by every replica. */
  name: string;
  /** The limit's label in metrics: one of a bounded set (docs/observability.md), never a key or a date. */
  label: string;
  /** The rule a refusal reports; rate.limited unless this is a daily quota. */
  rule?: 'rate.limited' | 'quota.exceeded';
  /** The sustained rate, e.g. 20 per 1 s. */
  rate: Window;
  /**
   * Extra allowance above the rate, used only once the rate's window is spent, e.g. "bursts of 40"
   * at 20/s = 20 extra per 10 s. Fixed windows, so a burst can straddle two of them.
   */
  burst?: Window;
}

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface Limiter {
  readonly name: string;
  consume(key: string): Promise<LimitDecision>;
}

/**
 * A limit shared by every replica through Redis. When Redis is unreachable the in-process insurance
 * limiter (same windows, per replica) decides instead, so requests keep being answered and limited.
 */
export function createLimiter(redis: Redis, spec: LimitSpec, metrics?: LimitMetrics): Limiter {
  const windowed = (suffix: string, w: Window): RateLimiterAbstract =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `limit:${spec.name}${suffix}`,
      points: w.points,
      duration: w.durationSeconds,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `insurance:${spec.name}${suffix}`, points: w.points, duration: w.durationSeconds }),
    });
  const limiter = spec.burst ? new BurstyRateLimiter(windowed('', spec.rate), windowed(':burst', spec.burst)) : windowed('', spec.rate);
  return {
    name: spec.name,
    consume: async (key) => {
      if (redis.status !== 'ready') metrics?.fallback(spec.label);
      try {
        await limiter.consume(key);
        return { allowed: true };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          metrics?.limited(spec.label, spec.rule ?? 'rate.limited');
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
        }
        throw rejection;
      }
    },
  };
}

/** 429 rate.limited with Retry-After (spec §7, §8). */
export class RateLimitedError extends HttpError {
  override readonly name = 'RateLimitedError';
  constructor(retryAfterSeconds: number, what = 'Too many requests') {
    super(429, 'rate.limited', `${what}; retry after ${retryAfterSeconds} s`, 'policy', { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** Consumes one point of each limiter in order and throws RateLimitedError at the first refusal. */
export async function enforce(checks: ReadonlyArray<readonly [Limiter, string]>, what?: string): Promise<void> {
  for (const [limiter, key] of checks) {
    const decision = await limiter.consume(key);
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, what);
  }
}
