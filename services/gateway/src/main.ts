import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, violationBody } from '@bus/http';
import { createKafka, kafkaReadiness } from '@bus/kafka';
import { busLimitSettings, busRequestLimits, createRedis, redisReadiness } from '@bus/limits';
import { createGatewayService } from './service';

void bootstrap({
  name: 'gateway',
  tracing,
  config: { ...servicePort(8082), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...busLimitsConfig },
  compose: async ({ config, logger, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'gateway' });
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    const gateway = createGatewayService({
      readiness: [databaseReadiness(db), redisReadiness(redis), kafkaReadiness(admin)],
    });
    const middleware = [busRequestLimits(redis, busLimitSettings(config))];
    return { listeners: [{ name: 'gateway', host: config.HOST, port: config.PORT, services: [gateway], renderError: violationBody, middleware }] };
  },
});
