import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, codeBody } from '@bus/http';
import { createLimitMetrics } from '@bus/limits';
import { portalConfig } from './config';
import { portalServiceOf } from './service';

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
    const portal = portalServiceOf(
      {
        db: postgres.client,
        redis: redis.client,
        kafka: kafka.client,
        producer,
        logger,
        metrics,
        limitMetrics: createLimitMetrics(metrics, 'portal'),
        ready: { postgres: postgres.ready, redis: redis.ready, kafka: kafka.ready },
      },
      config,
    );
    return { listeners: [{ name: 'portal', host: config.HOST, port: config.PORT, services: [portal], renderError: codeBody }] };
  },
});
