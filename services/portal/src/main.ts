import { tracing } from './instrument';
import { databaseConfig, kafkaConfig, servicePort } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, codeBody } from '@bus/http';
import { createKafka, kafkaReadiness } from '@bus/kafka';
import { createPortalService } from './service';

void bootstrap({
  name: 'portal',
  tracing,
  config: { ...servicePort(8092), ...databaseConfig, ...kafkaConfig },
  compose: async ({ config, logger, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'portal' });
    onClose(() => db.destroy());
    const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: config.KAFKA_CLIENT_ID, logger });
    const admin = kafka.admin();
    onClose(() => admin.disconnect());
    const portal = createPortalService({ readiness: [databaseReadiness(db), kafkaReadiness(admin)] });
    return { listeners: [{ name: 'portal', host: config.HOST, port: config.PORT, services: [portal], renderError: codeBody }] };
  },
});
