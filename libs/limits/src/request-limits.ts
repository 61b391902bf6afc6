import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import type { busLimitsConfig, ConfigOf } from '@bus/config';
import { createLimiter, enforce, type LimitChecks } from './limiter';
import type { LimitMetrics } from './metrics';

/**
 * The bus host's limits on every route (docs/api.md#limits), applied before routing and before any body is read:
 * per source address 600 requests a minute, and the whole API 200 a second with bursts of 400.
 * Mounted once per process on the bus listener (never per service router, which would count a
 * request once per router it passes). The operational routes (/healthz, /readyz, /metrics) come
 * before it, so probes and scrapes are never limited.
 */
export interface BusRequestLimitSettings {
  perAddressPerMinute: number;
  apiPerSecond: number;
  apiBurst: number;
}

/** docs/api.md#limits values; configuration may lower or raise them (e.g. a loopback load test). */
export const SPEC_BUS_REQUEST_LIMITS: BusRequestLimitSettings = { perAddressPerMinute: 600, apiPerSecond: 200, apiBurst: 400 };

/**
 * The host limits of requests busRequestLimits left to their connection quota, until it (or the error
 * middleware) counts them: one Redis round trip for the four windows of a bearer request instead of
 * two, with the same answers as counting them at once.
 */
const deferredHostLimits = new WeakMap<Response, LimitChecks>();

/**
 * Requests whose host limits are counted later, in the same Redis call as their connection quota
 * (libs/identity connectionQuota): only a bearer route that authenticates and then counts the quota,
 * for a token already verified (so a flood of unknown tokens is still limited before any signature
 * check). Every other request is counted here, at once.
 */
export type CountWithQuota = (req: Request) => boolean;

export function busRequestLimits(
  redis: Redis,
  settings: BusRequestLimitSettings = SPEC_BUS_REQUEST_LIMITS,
  metrics?: LimitMetrics,
  countWithQuota?: CountWithQuota,
): RequestHandler {
  const perAddress = createLimiter(
    redis,
    { name: 'bus-address', label: 'address', rate: { points: settings.perAddressPerMinute, durationSeconds: 60 } },
    metrics,
  );
  const extra = settings.apiBurst - settings.apiPerSecond;
  const wholeApi = createLimiter(
    redis,
    {
      name: 'bus-api',
      label: 'api_global',
      rate: { points: settings.apiPerSecond, durationSeconds: 1 },
      ...(extra > 0 ? { burst: { points: extra, durationSeconds: 10 } } : {}),
    },
    metrics,
  );
  return (req: Request, res: Response, next: NextFunction) => {
    const checks: LimitChecks = [
      [perAddress, sourceAddress(req)],
      [wholeApi, 'all'],
    ];
    if (countWithQuota?.(req)) {
      deferredHostLimits.set(res, checks);
      next();
      return;
    }
    enforce(checks).then(() => next(), next);
  };
}

/** The host limits left to this request's connection quota, now the caller's to count first (none: empty). */
export function takeDeferredHostLimits(res: Response): LimitChecks {
  const checks = deferredHostLimits.get(res) ?? [];
  deferredHostLimits.delete(res);
  return checks;
}

/**
 * Counts the host limits still left on this request (its connection quota was never reached): undefined
 * when none are, else a promise that rejects with their refusal (RateLimitedError).
 */
export function settleDeferredHostLimits(res: Response): Promise<void> | undefined {
  const checks = deferredHostLimits.get(res);
  if (!checks) return undefined;
  deferredHostLimits.delete(res);
  return enforce(checks);
}

/** The caller's address as the socket sees it (`trust proxy` is off: a forwarded header is not proof). */
export function sourceAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}

/** The settings a process configured through BUS_LIMIT_* (libs/config busLimitsConfig). */
export function busLimitSettings(config: ConfigOf<typeof busLimitsConfig>): BusRequestLimitSettings {
  return {
    perAddressPerMinute: config.BUS_LIMIT_PER_ADDRESS_PER_MINUTE,
    apiPerSecond: config.BUS_LIMIT_API_PER_SECOND,
    apiBurst: config.BUS_LIMIT_API_BURST,
  };
}
