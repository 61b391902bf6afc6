import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, violationBody } from '@bus/http';
import { createKafka, kafkaReadiness } from '@bus/kafka';
import { createRedis, redisReadiness } from '@bus/limits';
import { createGatewayService } from './service';

void bootstrap({
  name: 'gateway',
  tracing,
  config: { ...servicePort(8082), ...databaseConfig, ...redisConfig, ...kafkaConfig },
  compose: async ({ config, logger, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'gateway' });
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger);
    onClose(() => redis.disconnect());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    const gateway = createGatewayService({
      readiness: [databaseReadiness(db), redisReadiness(redis), kafkaReadiness(admin)],
    });
    return { listeners: [{ name: 'gateway', host: config.HOST, port: config.PORT, services: [gateway], renderError: violationBody }] };
  },
});
