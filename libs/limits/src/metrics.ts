import { Counter, type Registry } from 'prom-client';
import { METRICS } from '@bus/observability';

/** What the limiters report (docs/observability.md); `limit` is one of the bounded labels of docs/api.md#limits rows. */
export interface LimitMetrics {
  limited(limit: string, rule: 'rate.limited' | 'quota.exceeded'): void;
  /** A decision the in-process insurance limiter took because Redis was not connected. */
  fallback(limit: string): void;
  /**
   * Makes a limit's series exist at 0 before its first count: a series that appears at 1 has no
   * increase() for Prometheus, so the first 429 or fallback would go unseen by the alerts.
   */
  declare(limit: string, rule: 'rate.limited' | 'quota.exceeded'): void;
}

/** Registers the limiter counters once per process registry; every limiter of the process reports here. */
export function createLimitMetrics(registry: Registry, app: string): LimitMetrics {
  const limited = new Counter({
    ...METRICS.rateLimited,
    help: '429 answers by rule and limit',
    registers: [registry],
  });
  const fallback = new Counter({
    ...METRICS.rateLimiterFallback,
    help: 'Limit decisions taken in process because Redis was unreachable',
    registers: [registry],
  });
  return {
    limited: (limit, rule) => limited.inc({ app, rule, limit }),
    fallback: (limit) => fallback.inc({ app, limit }),
    declare: (limit, rule) => {
      limited.inc({ app, rule, limit }, 0);
      fallback.inc({ app, limit }, 0);
    },
  };
}
