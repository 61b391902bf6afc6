export { createRedis, redisReadiness } from './redis';
export type { Redis } from './redis';
export { consumeInOrder, createLimiter, enforce, RateLimitedError } from './limiter';
export type { Limiter, LimitChecks, LimitSpec, LimitDecision, Window } from './limiter';
export {
  QUOTA_TIERS,
  CUSTOM_QUOTA_CEILING,
  createConnectionQuotas,
  connectionQuotasOf,
  QuotaExceededError,
  rateLimitFields,
  secondsUntilUtcMidnight,
} from './quota';
export type { Quota, QuotaTier, QuotaDecision, ConnectionQuotas, WindowLeft } from './quota';
export { busRequestLimits, busLimitSettings, settleDeferredHostLimits, sourceAddress, SPEC_BUS_REQUEST_LIMITS, takeDeferredHostLimits } from './request-limits';
export type { BusRequestLimitSettings, CountWithQuota } from './request-limits';
export { createLimitMetrics } from './metrics';
export type { LimitMetrics } from './metrics';
