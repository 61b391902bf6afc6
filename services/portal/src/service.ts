import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';

export interface PortalServiceDeps {
  /** Postgres (tenancy) and Kafka (control topic) readiness. */
  readiness: ReadinessCheck[];
}

/** Operator and house admin API (DESIGN §5), under /api/admin on the portal host. */
export function createPortalService(deps: PortalServiceDeps): Service {
  return {
    name: 'portal',
    routers: [notImplementedRouter([['all', '/api/admin/{*path}']])],
    readiness: deps.readiness,
  };
}
