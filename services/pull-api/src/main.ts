import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseOptionsOf, databaseReadiness } from '@bus/db';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { connectionQuota, createIdentity, identityConfig } from '@bus/identity';
import { createKafka } from '@bus/kafka';
import { busLimitSettings, busRequestLimits, createConnectionQuotas, createLimitMetrics, createRedis, redisReadiness } from '@bus/limits';
import { pullApiConfig, pullApiDepsOf } from './config';
import { createPullApiService } from './service';

void bootstrap({
  name: 'pull-api',
  tracing,
  config: { ...servicePort(8083), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...busLimitsConfig, ...identityConfig, ...pullApiConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const db = createDatabase(databaseOptionsOf(config, 'pull-api'));
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    // Kafka only carries the control topic that drops cached connections; the cache's TTL bounds how
    // stale they get without it, so Kafka is an optional readiness matter here (control-topic).
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });

    const limitMetrics = createLimitMetrics(metrics, 'pull-api');
    const identity = createIdentity({ db, kafka, logger, baseUrl: config.BUS_BASE_URL, cacheTtlMs: config.IDENTITY_CACHE_TTL, name: 'pull-api' });
    const quota = connectionQuota({ store: identity.quotas, quotas: createConnectionQuotas(redis, limitMetrics) });
    const pullApi = createPullApiService({
      ...pullApiDepsOf({ db, logger, metrics, authenticator: identity, connectionQuota: quota }, config),
      readiness: [databaseReadiness(db), redisReadiness(redis), identity.controlReadiness],
    });
    const middleware = [requestFirewall(), busRequestLimits(redis, busLimitSettings(config), limitMetrics)];
    return {
      listeners: [{ name: 'pull-api', host: config.HOST, port: config.PORT, services: [pullApi], renderError: violationBody, middleware }],
      background: [identity.service],
    };
  },
});
