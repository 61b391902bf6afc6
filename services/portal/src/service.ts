import type { QueueOperations } from '@bus/contracts';
import type { Knex } from '@bus/db';
import {
  createRouter,
  cacheableJson,
  DOCUMENT_CACHE_CONTROL,
  requestValidation,
  sendCacheable,
  unavailableOnAnyFailure,
  type ReadinessCheck,
  type Service,
} from '@bus/http';
import { IdentityAdmin, PrincipalStore, type ControlPublisher } from '@bus/identity';
import { createLimiter, type LimitMetrics, type Redis } from '@bus/limits';
import type { Logger } from '@bus/observability';
import { openapi } from '@bus/schemas';
import { loadSkillLibrary, type SkillLibrary } from '@bus/skills';
import { refuseUnmetPreconditions } from './admin-preconditions';
import { adminErrorPage, adminRoutes } from './admin-routes';
import { portalDepsOf } from './config';
import { queueOperations } from '@bus/queue';
import type { Kafka, Producer } from '@bus/kafka';
import type { Registry } from 'prom-client';
import { KnexAdminStore } from './admin-store';
import { operatorAuth, type OperatorCredentials } from './operator-auth';
import { AdminRequestInvalidError, AdminUnavailableError } from './errors';
import { bindingOperations, providerRoutes } from './provider-routes';
import { principalOperations, principalRoutes } from './principal-routes';
import { registrationOperations } from './registrations';
import { quarantineRoutes } from './quarantine-routes';
import { createReplayRunner, type ReplayRunner } from './replays';
import { ProducerAccess, type PortalBus } from './producer-access';
import { SimulationRunner } from './simulations';
import { traceRoutes } from './trace-routes';
import { adminAudit } from './admin-audit';
import { peopleRouters, PeopleStore, portalErrorPage, type PeopleSignIn } from './people';
import { consumerToolsRoutes, type BusEnvironment } from './consumer-tools-routes';

export interface PortalServiceDeps {
  db: Knex;
  /** The Redis of the per-address admin limit, shared by every replica. */
  redis: Redis;
  /** Announces tenancy, credential, permission and quota changes (bus.control.v1). */
  control: ControlPublisher;
  logger: Logger;
  operator: OperatorCredentials;
  perAddressPerMinute: number;
  /** The environment's replay archive (KAFKA_MESSAGES_RETENTION). */
  archiveMs: number;
  /** SIGNING_KEY_ENCRYPTION_KEY: seals the AWS principals' secret access keys. */
  encryptionKey: Buffer;
  /** Delivery's replay primitive, queue stats and quarantine redrive, from the composition root. */
  queues: QueueOperations;
  /** BUS_ENVIRONMENT: fault injection is refused outside a Sandbox. */
  environment: BusEnvironment;
  /** Postgres, Redis and Kafka readiness. */
  readiness: ReadinessCheck[];
  library?: SkillLibrary;
  limitMetrics?: LimitMetrics;
  /** IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: a provider's JWKS URL may be http to a loopback host (tests only). */
  allowHttpLoopbackJwks: boolean;
  /** Sign-in for people (PORTAL_OIDC_*); undefined leaves the portal's pages and /api/portal off. */
  signIn?: PeopleSignIn;
  /** Where the portal reaches the bus to publish from a producer's page (PORTAL_BUS_URL, PORTAL_BUS_AUTH_URL); undefined turns that off. */
  bus?: PortalBus;
}

export interface PortalService extends Service {
  /** The replays this process runs (tests wait on it). */
  replays: ReplayRunner;
}

/** Publishing from a producer's page (a test message, the simulated producer), or why each is off: words for the 409 and the page. */
function publishingOf(deps: PortalServiceDeps): { access: ProducerAccess | string; simulations: SimulationRunner | string } {
  if (!deps.bus) {
    const off = 'Publishing from the portal is off on this deployment (PORTAL_BUS_URL is not set)';
    return { access: off, simulations: off };
  }
  const access = new ProducerAccess(deps.bus);
  if (deps.environment !== 'sandbox')
    return { access, simulations: `A simulated producer is a Sandbox tool; this bus is ${deps.environment} (BUS_ENVIRONMENT)` };
  return { access, simulations: new SimulationRunner({ redis: deps.redis, logger: deps.logger, access }) };
}

/** The operator's admin API under /api/admin on the portal host (docs/admin.md). */
export function createPortalService(deps: PortalServiceDeps): PortalService {
  // Every store call and delivery operation is a Postgres call: whatever fails there is the
  // documented 503 admin.unavailable (cause logged), never a 500.
  const store = unavailableOnAnyFailure(KnexAdminStore.create(deps.db), (cause) => new AdminUnavailableError(cause));
  const queues = unavailableOnAnyFailure(deps.queues, (cause) => new AdminUnavailableError(cause));
  const replays = createReplayRunner({ store, replay: queues.replay, logger: deps.logger });
  const library = deps.library ?? loadSkillLibrary();
  const perAddress = createLimiter(
    deps.redis,
    { name: 'admin.address', label: 'admin_address', rate: { points: deps.perAddressPerMinute, durationSeconds: 60 } },
    deps.limitMetrics,
  );

  const documents = createRouter();
  const adminDocument = cacheableJson(openapi.admin);
  documents.get('/api/admin/openapi.json', (req, res) => {
    sendCacheable(req, res, adminDocument, DOCUMENT_CACHE_CONTROL);
  });
  // Every admin request is checked against the served document once the operator is known: the
  // path and query parameters here, a JSON body where the route reads it (admin-routes.ts).
  const requests = requestValidation(openapi.admin, (problem) => new AdminRequestInvalidError(problem), { requireJsonMediaType: true });
  const admin = IdentityAdmin.create({ db: deps.db, control: deps.control, logger: deps.logger });
  const principals = principalOperations({ principals: PrincipalStore.create({ db: deps.db, encryptionKey: deps.encryptionKey }), store });
  const authenticated = createRouter();
  // Every change through the admin API is audited under the operator's client id (docs/portal.md).
  authenticated.use(
    '/api/admin',
    operatorAuth(deps.operator, perAddress),
    adminAudit(new PeopleStore(deps.db), deps.operator.clientId, deps.logger),
    requests.parameters,
    refuseUnmetPreconditions,
  );

  return {
    name: 'portal',
    errorPage: (req, err, requestId) => adminErrorPage(req, err, requestId) ?? portalErrorPage(req, err, requestId),
    routers: [
      documents,
      authenticated,
      adminRoutes({
        admin,
        store,
        library,
        replays,
        queues,
        archiveMs: deps.archiveMs,
        requests,
      }),
      quarantineRoutes({ store, queues, requests }),
      providerRoutes({ db: deps.db, admin, requests, allowHttpLoopback: deps.allowHttpLoopbackJwks }),
      principalRoutes({ principals, requests }),
      traceRoutes({ db: deps.db }),
      ...peopleRouters({
        db: deps.db,
        admin,
        store,
        logger: deps.logger,
        signIn: deps.signIn,
        tools: { queues, replays, archiveMs: deps.archiveMs, ...publishingOf(deps) },
        library,
        principals,
        bindings: bindingOperations({ db: deps.db, admin }),
        registrations: registrationOperations({ store, library }),
      }),
      consumerToolsRoutes({ admin, store, queues, requests, environment: deps.environment }),
    ],
    readiness: deps.readiness,
    replays,
  };
}

/** The portal on a process's shared clients, as its own main and the all-in-one run it. */
export function portalServiceOf(
  clients: {
    db: Knex;
    redis: Redis;
    kafka: Kafka;
    producer: Producer;
    logger: Logger;
    metrics: Registry;
    limitMetrics: LimitMetrics;
    ready: { postgres: ReadinessCheck; redis: ReadinessCheck; kafka: ReadinessCheck };
  },
  config: Parameters<typeof portalDepsOf>[1],
): PortalService {
  const { db, redis, kafka, producer, logger, metrics, limitMetrics, ready } = clients;
  return createPortalService({
    ...portalDepsOf({ db, redis, producer, logger, queues: queueOperations({ db, kafka, logger, metrics }) }, config),
    readiness: [ready.postgres, ready.redis, ready.kafka],
    limitMetrics,
  });
}
