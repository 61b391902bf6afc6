export { createRedis, redisReadiness } from './redis';
export type { Redis } from './redis';
export { createLimiter, enforce, RateLimitedError } from './limiter';
export type { Limiter, LimitSpec, LimitDecision, Window } from './limiter';
