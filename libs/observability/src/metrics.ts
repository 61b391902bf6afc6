import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

/**
 * One registry per process (several services may share one process, so the service is a label on the
 * bus metrics, not a registry boundary). Default Node metrics carry a `process_` / `nodejs_` prefix.
 */
export function createMetricsRegistry(opts: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}
