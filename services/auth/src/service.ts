import type { Request, Response } from 'express';
import type { Knex } from '@bus/db';
import {
  createRouter,
  cacheableJson,
  DOCUMENT_CACHE_CONTROL,
  HttpError,
  MessageTooLargeError,
  OAuthError,
  readBody,
  renderError,
  sendCacheable,
  violationBody,
  type ErrorPage,
  type ReadinessCheck,
  type Service,
} from '@bus/http';
import { createConnectionUse, KnexIdentityStore, type IdentityStore } from '@bus/identity';
import { createLimiter, enforce, RateLimitedError, type LimitMetrics, type LimitSpec, type Redis } from '@bus/limits';
import { Counter, type Registry } from 'prom-client';
import { METRICS } from '@bus/observability';
import { audienceFor, authorizationServerMetadata, metadataPaths } from '@bus/tokens';
import type { Logger } from 'pino';
import { createTokenIssuer } from './issuer';
import { SigningKeys } from './signing-keys';
import { authDepsOf } from './config';
import { basicClientId, InvalidClientError, InvalidRequestError, isFormContentType, NO_STORE, parseTokenRequest } from './token-request';

/** docs/api.md#limits, token rows. Windows are fixed; "bursts of 40" at 20/s is 20 extra per 10 s (libs/limits). */
export const TOKEN_LIMITS = {
  perBasicClient: { rate: { points: 30, durationSeconds: 300 } },
  perAddress: { rate: { points: 100, durationSeconds: 300 } },
  allCallers: { rate: { points: 20, durationSeconds: 1 }, burst: { points: 20, durationSeconds: 10 } },
} as const satisfies Record<string, Omit<LimitSpec, 'name' | 'label'>>;

export type TokenLimits = { [K in keyof typeof TOKEN_LIMITS]: Omit<LimitSpec, 'name' | 'label'> };

const TOKEN_PATH = '/v1/oauth/token';

/**
 * Every refusal on the token path carries no-store (RFC 6749 §5.1, docs/auth.md), also those given
 * before the route runs: another method (405), an ambiguous request, the host's limits. The body is
 * the one the host gives anyway (RFC 6749's for the route's own OAuth errors).
 */
const tokenRouteErrors: ErrorPage = (req, err, requestId) =>
  req.path === TOKEN_PATH ? { json: renderError(err, requestId, violationBody), headers: NO_STORE } : undefined;

/** bus_token_requests_total's outcome label: issued, each OAuth error of the route, rate_limited, error (docs/observability.md). */
const TOKEN_OUTCOMES = ['issued', 'invalid_request', 'invalid_client', 'unsupported_grant_type', 'temporarily_unavailable', 'rate_limited', 'error'] as const;

/** A token request body is a few hundred bytes; anything near this is not one. */
export const TOKEN_BODY_LIMIT = 8 * 1024;

export interface AuthServiceDeps {
  db: Knex;
  redis: Redis;
  logger: Logger;
  /** BUS_BASE_URL: tokens are issued for {base}/v1/oauth and {base}. */
  baseUrl: string;
  /** SIGNING_KEY_ENCRYPTION_KEY (32 bytes). */
  signingKeyEncryptionKey: Buffer;
  /** SIGNING_KEY_ROTATION_INTERVAL in ms. */
  rotationIntervalMs: number;
  /** Postgres (credentials, signing keys) and Redis (token URL limits) readiness. */
  readiness: ReadinessCheck[];
  /** The clock; tests pass a controllable one. */
  now?: () => Date;
  /** Reads of connections and credentials; the knex store by default. */
  store?: IdentityStore;
  /** The process registry: bus_token_requests_total{outcome} is counted there when given. */
  metrics?: Registry;
  /** The process's limiter counters (bus_rate_limited_total, bus_rate_limiter_fallback_total). */
  limitMetrics?: LimitMetrics;
  /** Tests: other windows, and a prefix that keeps their Redis keys apart. */
  limits?: Partial<TokenLimits>;
  limitPrefix?: string;
}

export class KeySetUnavailableError extends HttpError {
  override readonly name = 'KeySetUnavailableError';
  constructor() {
    super(503, 'keys.unavailable', 'The key set could not be read; retry shortly', 'policy', { 'Retry-After': '1' });
  }
}

/** Token service: POST /v1/oauth/token, GET /v1/oauth/jwks (docs/api.md#resources, #token-requests, #errors, #limits) and its RFC 8414 metadata. */
export function createAuthService(deps: AuthServiceDeps): Service & { signingKeys: SigningKeys } {
  const now = deps.now ?? (() => new Date());
  const audience = audienceFor(deps.baseUrl);
  const signingKeys = SigningKeys.create({
    db: deps.db,
    encryptionKey: deps.signingKeyEncryptionKey,
    rotationIntervalMs: deps.rotationIntervalMs,
    logger: deps.logger,
    now,
  });
  const connectionUse = createConnectionUse({ db: deps.db, logger: deps.logger });
  const issue = createTokenIssuer({ store: deps.store ?? KnexIdentityStore.create(deps.db), keys: signingKeys, audience, logger: deps.logger, now });
  const limits = { ...TOKEN_LIMITS, ...deps.limits };
  const prefix = deps.limitPrefix ?? 'token';
  const perClient = createLimiter(deps.redis, { name: `${prefix}.client`, label: 'token_client', ...limits.perBasicClient }, deps.limitMetrics);
  const perAddress = createLimiter(deps.redis, { name: `${prefix}.address`, label: 'token_address', ...limits.perAddress }, deps.limitMetrics);
  const allCallers = createLimiter(deps.redis, { name: `${prefix}.all`, label: 'token_global', ...limits.allCallers }, deps.limitMetrics);

  const requests = deps.metrics
    ? new Counter({
        ...METRICS.tokenRequests,
        help: 'Token requests by outcome: issued, or the OAuth error / rate_limited',
        registers: [deps.metrics],
      })
    : undefined;
  // Every outcome at 0 from the start: a rate() over a series that appears at its first count misses it.
  for (const outcome of TOKEN_OUTCOMES) requests?.inc({ outcome }, 0);
  const count = (outcome: (typeof TOKEN_OUTCOMES)[number]) => requests?.inc({ outcome });

  const tokenRoute = async (req: Request, res: Response) => {
    res.set(NO_STORE);
    const authorization = req.header('authorization');
    // Limits before the body is read: the client of a well-formed Basic header, the source address, everyone.
    const client = basicClientId(authorization);
    await enforce(
      [...(client !== undefined ? ([[perClient, client]] as const) : []), [perAddress, sourceAddress(req)], [allCallers, 'all']],
      'Too many token requests',
    );
    if (!isFormContentType(req.header('content-type'))) {
      throw new InvalidRequestError('The body must be application/x-www-form-urlencoded');
    }
    const body = await readFormBody(req);
    const request = parseTokenRequest(authorization, body);
    if (!request.credentials) throw new InvalidClientError();
    res.json(await issue(request.credentials));
    void connectionUse.used(request.credentials.clientId);
  };

  const router = createRouter();
  router.post(TOKEN_PATH, async (req, res) => {
    try {
      await tokenRoute(req, res);
      count('issued');
    } catch (err) {
      count(err instanceof OAuthError ? err.error : err instanceof RateLimitedError ? 'rate_limited' : 'error');
      throw err;
    }
  });
  router.get('/v1/oauth/jwks', async (req, res) => {
    let keys;
    try {
      keys = await signingKeys.published();
    } catch {
      throw new KeySetUnavailableError();
    }
    // docs/api.md#signing-key-set: may be cached for five minutes. The tag follows the published keys, so a client
    // revalidating after a rotation gets the new set, and 304 until then.
    sendCacheable(req, res, cacheableJson({ keys }), DOCUMENT_CACHE_CONTROL);
  });

  // RFC 8414: what OAuth libraries discover from the issuer alone. Fixed per process, so cacheable
  // like the key set.
  const metadata = cacheableJson(authorizationServerMetadata(audience));
  router.get(metadataPaths(audience), (req, res) => {
    sendCacheable(req, res, metadata, DOCUMENT_CACHE_CONTROL);
  });

  return {
    name: 'auth',
    routers: [router],
    errorPage: tokenRouteErrors,
    readiness: deps.readiness,
    signingKeys,
    start: () => signingKeys.start(),
    stop: () => signingKeys.stop(),
  };
}

/** The peer address (`trust proxy` is off: a proxy in front must be configured to keep it). */
function sourceAddress(req: Request): string {
  return req.socket.remoteAddress ?? 'unknown';
}

async function readFormBody(req: Request): Promise<string> {
  try {
    return (await readBody(req, TOKEN_BODY_LIMIT)).toString('utf8');
  } catch (err) {
    if (err instanceof MessageTooLargeError) throw new InvalidRequestError(`The body is over ${TOKEN_BODY_LIMIT} bytes`);
    throw err;
  }
}

/** The token service on a process's shared clients, as its own main and the all-in-one run it. */
export function authServiceOf(
  clients: Parameters<typeof authDepsOf>[0] & { ready: { postgres: ReadinessCheck; redis: ReadinessCheck } },
  config: Parameters<typeof authDepsOf>[1],
): Service {
  const { ready, ...shared } = clients;
  return createAuthService({ ...authDepsOf(shared, config), readiness: [ready.postgres, ready.redis] });
}
