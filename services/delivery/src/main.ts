import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, violationBody } from '@bus/http';
import { deliveryConfig } from './config';
import { deliveryServiceOf } from './service';

void bootstrap({
  name: 'delivery',
  tracing,
  config: { ...servicePort(8084), ...databaseConfig, ...kafkaConfig, ...deliveryConfig },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    const clients = processClients(ctx, 'delivery');
    const postgres = clients.postgres();
    const kafka = clients.kafka();
    const delivery = deliveryServiceOf(
      { db: postgres.client, kafka: kafka.client, logger, metrics, activity: clients.activity(), ready: { postgres: postgres.ready, kafka: kafka.ready } },
      config,
    );
    // Delivery has no API; its port serves the operational routes (/healthz, /readyz, /metrics).
    return { listeners: [{ name: 'delivery', host: config.HOST, port: config.PORT, services: [delivery], renderError: violationBody }] };
  },
});
