import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

/**
 * prom-client's gauges named like counters (Prometheus's naming rules, `promtool check metrics`):
 * each is also exported under the name without `_total` (`nodejs_active_handles`, …), kept.
 */
const GAUGES_NAMED_AS_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * One registry per process (several services may share one process, so the service is a label on the
 * bus metrics, not a registry boundary). Default Node metrics carry a `process_` / `nodejs_` prefix.
 */
export function createMetricsRegistry(opts: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    for (const name of GAUGES_NAMED_AS_COUNTERS) registry.removeSingleMetric(name);
  }
  return registry;
}
