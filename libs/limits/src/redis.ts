import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarning } from '@bus/observability';

export type { Redis };

/**
 * The Redis client behind the rate limiters. Commands fail at once while Redis is unreachable
 * (no offline queue, one retry) so a request never waits on a dead Redis: the limiters fall back to
 * their in-process insurance and /readyz says so. The client keeps reconnecting in the background.
 */
export function createRedis(url: string, logger: Logger, opts: { keyPrefix?: string } = {}): Redis {
  const redis = new Redis(url, {
    // Every key of this deployment starts with the prefix, so deployments can share one Redis.
    ...(opts.keyPrefix ? { keyPrefix: `${opts.keyPrefix}:` } : {}),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // A dead Redis emits an error per reconnect attempt; one line every 10 s is enough.
  const unreachable = throttledWarning(logger, 'redis unreachable');
  redis.on('error', (err: Error) => unreachable({ err: err.message }));
  return redis;
}

/**
 * Redis is optional for readiness: every limiter has an in-process insurance limiter, so without Redis
 * the process keeps answering (limits then count per replica) and /readyz says `degraded`.
 */
export function redisReadiness(redis: Redis) {
  return { name: 'redis', optional: true, check: () => redis.ping() };
}
