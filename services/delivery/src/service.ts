import type { ReadinessCheck, Service } from '@bus/http';

export interface DeliveryServiceDeps {
  /** Postgres (queues) and Kafka (bus.messages.v1) readiness. */
  readiness: ReadinessCheck[];
}

/**
 * Delivery: consumes bus.messages.v1 into one queue per consumer connection (DESIGN §4). It has no
 * routes of its own; its process serves /healthz, /readyz and /metrics only.
 */
export function createDeliveryService(deps: DeliveryServiceDeps): Service {
  return { name: 'delivery', routers: [], readiness: deps.readiness };
}
