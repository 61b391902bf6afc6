import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';

export interface AuthServiceDeps {
  /** Postgres (credentials, signing keys) and Redis (token URL limits) readiness. */
  readiness: ReadinessCheck[];
}

/** Token service: POST /v1/oauth/token, GET /v1/oauth/jwks (spec §2.2–2.4, §4.1, §7.1). */
export function createAuthService(deps: AuthServiceDeps): Service {
  return {
    name: 'auth',
    routers: [notImplementedRouter([['post', '/v1/oauth/token'], ['get', '/v1/oauth/jwks']])],
    readiness: deps.readiness,
  };
}
