import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { HttpError } from '@bus/contracts';
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

/**
 * An allowed request reports what the limiter's own answer says is left: `remaining` more requests
 * within the next `resetSeconds` (the rest of the rate's window, or of the burst allowance once the
 * rate's window is spent). No extra Redis call: the count is the one the request just made.
 */
export type LimitDecision = { allowed: true; remaining: number; resetSeconds: number } | { allowed: false; retryAfterSeconds: number };

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
  const rate = windowed('', spec.rate);
  const burst = spec.burst ? windowed(':burst', spec.burst) : undefined;
  const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));
  const allowed = (remaining: number, msBeforeNext: number): LimitDecision => ({
    allowed: true,
    remaining: Math.max(0, remaining),
    resetSeconds: seconds(msBeforeNext),
  });
  const refused = (msBeforeNext: number): LimitDecision => ({ allowed: false, retryAfterSeconds: Math.max(1, seconds(msBeforeNext)) });

  // The burst allowance is spent only once the rate's window is (as rate-limiter-flexible's
  // BurstyRateLimiter does), composed here so that an allowed burst request knows what is left of it.
  const decide = async (key: string): Promise<LimitDecision> => {
    const inRate = await settled(rate.consume(key));
    if (inRate.allowed) return allowed(inRate.answer.remainingPoints, inRate.answer.msBeforeNext);
    if (!burst) return refused(inRate.answer.msBeforeNext);
    const inBurst = await settled(burst.consume(key));
    // Until the rate's window ends, only what is left of the burst allowance is left.
    if (inBurst.allowed) return allowed(inBurst.answer.remainingPoints, inRate.answer.msBeforeNext);
    return refused(Math.min(inRate.answer.msBeforeNext, inBurst.answer.msBeforeNext));
  };

  return {
    name: spec.name,
    consume: async (key) => {
      if (redis.status !== 'ready') metrics?.fallback(spec.label);
      const decision = await decide(key);
      if (!decision.allowed) metrics?.limited(spec.label, spec.rule ?? 'rate.limited');
      return decision;
    },
  };
}

/** rate-limiter-flexible rejects with its answer when a window is spent; anything else is a failure. */
async function settled(consumption: Promise<RateLimiterRes>): Promise<{ allowed: boolean; answer: RateLimiterRes }> {
  try {
    return { allowed: true, answer: await consumption };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { allowed: false, answer: rejection };
    throw rejection;
  }
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
