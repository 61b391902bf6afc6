import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { connectionQuota, createIdentity, hostLimitsWithQuota, identityConfig } from '@bus/identity';
import { busLimitSettings, busRequestLimits, connectionQuotasOf, createLimitMetrics } from '@bus/limits';
import { pullApiConfig } from './config';
import { CONSUMER_QUOTA_ROUTES } from './pull-routes';
import { pullApiServiceOf } from './service';

void bootstrap({
  name: 'pull-api',
  tracing,
  config: { ...servicePort(8083), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...busLimitsConfig, ...identityConfig, ...pullApiConfig },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    const clients = processClients(ctx, 'pull-api');
    const postgres = clients.postgres();
    const redis = clients.redis();
    // Kafka only carries the control topic that drops cached connections; the cache's TTL bounds how
    // stale they get without it, so Kafka is an optional readiness matter here (control-topic).
    const kafka = clients.kafka().client;
    const db = postgres.client;
    const activity = clients.activity();

    const limitMetrics = createLimitMetrics(metrics, 'pull-api');
    const identity = createIdentity({ db, kafka, logger, baseUrl: config.BUS_BASE_URL, cacheTtlMs: config.IDENTITY_CACHE_TTL, name: 'pull-api' });
    const quota = connectionQuota({ store: identity.quotas, quotas: connectionQuotasOf(redis.client, config, logger, limitMetrics) });
    const pullApi = pullApiServiceOf(
      {
        db,
        redis: redis.client,
        identity,
        logger,
        metrics,
        activity,
        limitMetrics,
        connectionQuota: quota,
        ready: { postgres: postgres.ready, redis: redis.ready },
      },
      config,
    );
    const middleware = [
      requestFirewall(),
      busRequestLimits(redis.client, busLimitSettings(config), limitMetrics, hostLimitsWithQuota(identity, CONSUMER_QUOTA_ROUTES)),
    ];
    return {
      listeners: [{ name: 'pull-api', host: config.HOST, port: config.PORT, services: [pullApi], renderError: violationBody, middleware }],
      background: [identity.service],
    };
  },
});
