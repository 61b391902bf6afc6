import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { queueOperations } from '@bus/queue';
import { bootstrap, codeBody } from '@bus/http';
import { createLimitMetrics } from '@bus/limits';
import { portalConfig, portalDepsOf } from './config';
import { createPortalService } from './service';

void bootstrap({
  name: 'portal',
  tracing,
  config: { ...servicePort(8092), ...databaseConfig, ...redisConfig, ...kafkaConfig, ...portalConfig },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    const clients = processClients(ctx, 'portal');
    const postgres = clients.postgres();
    const redis = clients.redis();
    const kafka = clients.kafka();
    const producer = await clients.producer();
    const db = postgres.client;
    const portal = createPortalService({
      ...portalDepsOf({ db, redis: redis.client, producer, logger, queues: queueOperations({ db, kafka: kafka.client, logger, metrics }) }, config),
      readiness: [postgres.ready, redis.ready, kafka.ready],
      limitMetrics: createLimitMetrics(metrics, 'portal'),
    });
    return { listeners: [{ name: 'portal', host: config.HOST, port: config.PORT, services: [portal], renderError: codeBody }] };
  },
});
