import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseOptionsOf, databaseReadiness } from '@bus/db';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { connectionQuota, createIdentity, identityConfig } from '@bus/identity';
import { createBoundedProducer, createKafka, kafkaReadiness } from '@bus/kafka';
import { busLimitSettings, busRequestLimits, createConnectionQuotas, createLimitMetrics, createRedis, redisReadiness } from '@bus/limits';
import { gatewayConfig } from './config';
import { createGatewayService, publishDepsOf, signedRoutesOf } from './service';

void bootstrap({
  name: 'gateway',
  tracing,
  config: { ...servicePort(8082), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...busLimitsConfig, ...identityConfig, ...gatewayConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const db = createDatabase(databaseOptionsOf(config, 'gateway'));
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    // The publish's producer gives up within the commit timeout (its own client: the control-topic
    // consumer and the admin keep kafkajs's patient defaults).
    const producer = createBoundedProducer({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger }, config.PUBLISH_COMMIT_TIMEOUT);
    await producer.connect();
    onClose(() => producer.disconnect());

    const limitMetrics = createLimitMetrics(metrics, 'gateway');
    const identity = createIdentity({ db, kafka, logger, baseUrl: config.BUS_BASE_URL, cacheTtlMs: config.IDENTITY_CACHE_TTL, name: 'gateway' });
    const gateway = createGatewayService({
      readiness: [databaseReadiness(db), redisReadiness(redis), kafkaReadiness(admin), identity.controlReadiness],
      authenticator: identity,
      db,
      logger,
      connectionQuota: connectionQuota({ store: identity.quotas, quotas: createConnectionQuotas(redis, limitMetrics) }),
      metrics,
      publish: publishDepsOf({ db, producer, logger, metrics, identity }, config),
      signed: signedRoutesOf({ db, redis, identity, limitMetrics }, config),
    });
    const middleware = [requestFirewall(), busRequestLimits(redis, busLimitSettings(config), limitMetrics)];
    return {
      listeners: [{ name: 'gateway', host: config.HOST, port: config.PORT, services: [gateway], renderError: violationBody, middleware }],
      background: [identity.service],
    };
  },
});
