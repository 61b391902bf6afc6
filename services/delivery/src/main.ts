import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, servicePort } from '@bus/config';
import { createDatabase, databaseOptionsOf, databaseReadiness } from '@bus/db';
import { bootstrap, violationBody } from '@bus/http';
import { createKafka, kafkaReadiness } from '@bus/kafka';
import { deliveryConfig, deliverySettings } from './config';
import { createDeliveryService } from './service';

void bootstrap({
  name: 'delivery',
  tracing,
  config: { ...servicePort(8084), ...databaseConfig, ...kafkaConfig, ...deliveryConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const db = createDatabase(databaseOptionsOf(config, 'delivery'));
    onClose(() => db.destroy());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    const delivery = createDeliveryService({
      readiness: [databaseReadiness(db), kafkaReadiness(admin)],
      db,
      kafka,
      logger,
      metrics,
      ...deliverySettings(config),
    });
    // Delivery has no API; its port serves the operational routes (/healthz, /readyz, /metrics).
    return { listeners: [{ name: 'delivery', host: config.HOST, port: config.PORT, services: [delivery], renderError: violationBody }] };
  },
});
