import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { connectionQuota, createIdentity, hostLimitsWithQuota, identityConfig } from '@bus/identity';
import { busLimitSettings, busRequestLimits, connectionQuotasOf, createLimitMetrics } from '@bus/limits';
import { gatewayConfig } from './config';
import { PUBLISH_QUOTA_ROUTES } from './publish-routes';
import { gatewayServiceOf } from './service';
import { managedAppsOf } from './managed-apps';

void bootstrap({
  name: 'gateway',
  tracing,
  config: { ...servicePort(8082), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...busLimitsConfig, ...identityConfig, ...gatewayConfig },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    // Before any client: a bad managed-apps file stops the process at once (exit 2, the entry named).
    const managedApps = managedAppsOf(config);
    const clients = processClients(ctx, 'gateway');
    const postgres = clients.postgres();
    const redis = clients.redis();
    const kafka = clients.kafka();
    // The publish's producer gives up within the commit timeout (its own client: the control-topic
    // consumer and the admin keep kafkajs's patient defaults).
    const producer = await clients.boundedProducer(config.PUBLISH_COMMIT_TIMEOUT);
    const db = postgres.client;
    const activity = clients.activity();

    const limitMetrics = createLimitMetrics(metrics, 'gateway');
    const identity = createIdentity({ db, kafka: kafka.client, logger, baseUrl: config.BUS_BASE_URL, cacheTtlMs: config.IDENTITY_CACHE_TTL, name: 'gateway' });
    const gateway = gatewayServiceOf(
      {
        db,
        redis: redis.client,
        producer,
        identity,
        logger,
        metrics,
        activity,
        limitMetrics,
        connectionQuota: connectionQuota({ store: identity.quotas, quotas: connectionQuotasOf(redis.client, config, logger, limitMetrics) }),
        managedApps,
        ready: { postgres: postgres.ready, redis: redis.ready, kafka: kafka.ready },
      },
      config,
    );
    const middleware = [
      requestFirewall(),
      busRequestLimits(redis.client, busLimitSettings(config), limitMetrics, hostLimitsWithQuota(identity, PUBLISH_QUOTA_ROUTES)),
    ];
    return {
      listeners: [{ name: 'gateway', host: config.HOST, port: config.PORT, services: [gateway], renderError: violationBody, middleware }],
      background: [identity.service],
    };
  },
});
