import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, port, redisConfig } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, codeBody, violationBody } from '@bus/http';
import { createKafka, kafkaReadiness } from '@bus/kafka';
import { createRedis, redisReadiness } from '@bus/limits';
import { createAuthService } from '@bus/auth';
import { createGatewayService } from '@bus/gateway';
import { createDeliveryService } from '@bus/delivery';
import { createPullApiService } from '@bus/pull-api';
import { createCatalogueService } from '@bus/catalogue';
import { createPortalService } from '@bus/portal';

/**
 * Every service in one process, as `npm run up` runs the bus locally: the bus routes (auth, gateway,
 * pull API) on BUS_PORT, the portal routes (catalogue, admin) on PORTAL_PORT, delivery in the
 * background. The services share one set of clients; in Kubernetes each runs alone from its own main.
 */
void bootstrap({
  name: 'all-in-one',
  tracing,
  config: {
    BUS_PORT: port({ default: 8080 }),
    PORTAL_PORT: port({ default: 8090 }),
    ...databaseConfig,
    ...redisConfig,
    ...kafkaConfig,
  },
  compose: async ({ config, logger, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'all-in-one' });
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger);
    onClose(() => redis.disconnect());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());

    const postgres = databaseReadiness(db);
    const kafkaReady = kafkaReadiness(admin);
    const redisReady = redisReadiness(redis);
    const delivery = createDeliveryService({ readiness: [postgres, kafkaReady] });
    return {
      listeners: [
        {
          name: 'bus',
          host: config.HOST,
          port: config.BUS_PORT,
          renderError: violationBody,
          services: [
            createAuthService({ readiness: [postgres, redisReady] }),
            createGatewayService({ readiness: [postgres, redisReady, kafkaReady] }),
            createPullApiService({ readiness: [postgres] }),
          ],
        },
        {
          name: 'portal',
          host: config.HOST,
          port: config.PORTAL_PORT,
          renderError: codeBody,
          services: [createCatalogueService(), createPortalService({ readiness: [postgres, kafkaReady] })],
        },
      ],
      background: [delivery],
    };
  },
});
