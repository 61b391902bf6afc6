import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';

export interface PullApiServiceDeps {
  /** Postgres (the consumer queues) readiness. */
  readiness: ReadinessCheck[];
}

/** Consumer routes: receive (long poll), ack, nack, skills (spec §2.8, §4). */
export function createPullApiService(deps: PullApiServiceDeps): Service {
  const base = '/v1/tenants/:t/consumers/:c';
  return {
    name: 'pull-api',
    routers: [
      notImplementedRouter([
        ['get', `${base}/messages`],
        ['post', `${base}/ack`],
        ['post', `${base}/nack`],
        ['get', `${base}/skills`],
      ]),
    ],
    readiness: deps.readiness,
  };
}
