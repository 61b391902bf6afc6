import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseOptionsOf, databaseReadiness } from '@bus/db';
import { queueOperations } from '@bus/delivery';
import { bootstrap, codeBody } from '@bus/http';
import { createKafka, createProducer, kafkaReadiness } from '@bus/kafka';
import { createLimitMetrics, createRedis, redisReadiness } from '@bus/limits';
import { portalConfig, portalDepsOf } from './config';
import { createPortalService } from './service';

void bootstrap({
  name: 'portal',
  tracing,
  config: { ...servicePort(8092), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...portalConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const db = createDatabase(databaseOptionsOf(config, 'portal'));
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    const producer = createProducer(kafka);
    await producer.connect();
    onClose(() => producer.disconnect());
    const portal = createPortalService({
      ...portalDepsOf({ db, redis, producer, logger, queues: queueOperations({ db, kafka, logger, metrics }) }, config),
      readiness: [databaseReadiness(db), redisReadiness(redis), kafkaReadiness(admin)],
      limitMetrics: createLimitMetrics(metrics, 'portal'),
    });
    return { listeners: [{ name: 'portal', host: config.HOST, port: config.PORT, services: [portal], renderError: codeBody }] };
  },
});
