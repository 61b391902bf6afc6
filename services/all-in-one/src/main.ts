import { tracing } from './instrument';
import { randomBytes } from 'node:crypto';
import { busLimitsConfig, databaseConfig, kafkaConfig, optional, port, redisConfig } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, codeBody, requestFirewall, violationBody } from '@bus/http';
import { busLimitSettings, busRequestLimits, connectionQuotasOf, createLimitMetrics } from '@bus/limits';
import { connectionQuota, createIdentity, hostLimitsWithQuota, identityConfig } from '@bus/identity';
import { authConfig, authServiceOf } from '@bus/auth';
import { gatewayConfig, gatewayServiceOf, managedAppsOf, PUBLISH_QUOTA_ROUTES } from '@bus/gateway';
import { deliveryConfig, deliveryServiceOf } from '@bus/delivery';
import { CONSUMER_QUOTA_ROUTES, pullApiConfig, pullApiServiceOf } from '@bus/pull-api';
import { createCatalogueService } from '@bus/catalogue';
import { portalConfig, portalServiceOf } from '@bus/portal';

/**
 * Every service in one process, as `npm run up` runs the bus locally: the bus routes (auth, gateway,
 * pull API) on BUS_PORT, the portal routes (catalogue, admin) on PORTAL_PORT, delivery in the
 * background. The services share one set of clients; in Kubernetes each runs alone from its own main.
 */
void bootstrap({
  name: 'all-in-one',
  tracing,
  config: {
    BUS_PORT: port({ default: 8080 }),
    PORTAL_PORT: port({ default: 8090 }),
    ...databaseConfig,
    ...redisConfig,
    ...kafkaConfig,
    ...busLimitsConfig,
    ...authConfig,
    ...identityConfig,
    ...gatewayConfig,
    ...deliveryConfig,
    ...pullApiConfig,
    ...portalConfig,
    // One process locally: without a configured key, a random one per start is enough (handles of a
    // previous run fail; their messages come back when the leases end).
    RECEIPT_HANDLE_KEY: optional(pullApiConfig.RECEIPT_HANDLE_KEY),
  },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    // Before any client: a bad managed-apps file stops the process at once (exit 2, the entry named).
    const managedApps = managedAppsOf(config);
    const clients = processClients(ctx, 'all-in-one');
    const { client: db, ready: postgres } = clients.postgres();
    const { client: redis, ready: redisReady } = clients.redis();
    const { client: kafka, ready: kafkaReady } = clients.kafka();
    // The publish's producer (the portal's control events use it too) gives up within the commit
    // timeout; delivery's consumer and the admin keep kafkajs's patient defaults on their own client.
    const producer = await clients.boundedProducer(config.PUBLISH_COMMIT_TIMEOUT);
    // One recorder for the gateway's, delivery's and the pull API's counts: one timer, one write.
    const activity = clients.activity();

    const limitMetrics = createLimitMetrics(metrics, 'all-in-one');
    const identity = createIdentity({ db, kafka, logger, baseUrl: config.BUS_BASE_URL, cacheTtlMs: config.IDENTITY_CACHE_TTL, name: 'all-in-one' });
    // One connection-quota check for the bus listener, mounted by publish and the consumer routes alike.
    const quota = connectionQuota({ store: identity.quotas, quotas: connectionQuotasOf(redis, config, logger, limitMetrics) });
    const delivery = deliveryServiceOf({ db, kafka, logger, metrics, activity, ready: { postgres, kafka: kafkaReady } }, config);
    return {
      listeners: [
        {
          name: 'bus',
          middleware: [
            requestFirewall(),
            busRequestLimits(redis, busLimitSettings(config), limitMetrics, hostLimitsWithQuota(identity, [...PUBLISH_QUOTA_ROUTES, ...CONSUMER_QUOTA_ROUTES])),
          ],
          host: config.HOST,
          port: config.BUS_PORT,
          renderError: violationBody,
          services: [
            authServiceOf({ db, redis, logger, metrics, limitMetrics, ready: { postgres, redis: redisReady } }, config),
            gatewayServiceOf(
              {
                db,
                redis,
                producer,
                identity,
                logger,
                metrics,
                activity,
                limitMetrics,
                connectionQuota: quota,
                managedApps,
                ready: { postgres, redis: redisReady, kafka: kafkaReady },
              },
              config,
            ),
            pullApiServiceOf(
              { db, redis, identity, logger, metrics, activity, limitMetrics, connectionQuota: quota, ready: { postgres, redis: redisReady } },
              { ...config, RECEIPT_HANDLE_KEY: config.RECEIPT_HANDLE_KEY ?? randomBytes(32) },
            ),
          ],
        },
        {
          name: 'portal',
          host: config.HOST,
          port: config.PORTAL_PORT,
          // The bus port serves the process's one registry; both serving it doubled every series.
          serveMetrics: false,
          renderError: codeBody,
          services: [
            createCatalogueService({ redis, readiness: [redisReady], limitMetrics }),
            portalServiceOf(
              { db, redis, kafka, producer, logger, metrics, limitMetrics, ready: { postgres, redis: redisReady, kafka: kafkaReady } },
              // The simulated producer publishes through this process's own bus listener unless told otherwise.
              { ...config, PORTAL_BUS_URL: config.PORTAL_BUS_URL ?? `http://${ownAddress(config.HOST)}:${config.BUS_PORT}` },
            ),
          ],
        },
      ],
      background: [identity.service, delivery],
    };
  },
});

/** An address of this host that reaches a listener bound to `host`: a wildcard bind is reached on loopback. */
function ownAddress(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
