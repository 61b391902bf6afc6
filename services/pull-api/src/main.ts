import { tracing } from './instrument';
import { databaseConfig, servicePort } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, violationBody } from '@bus/http';
import { createPullApiService } from './service';

void bootstrap({
  name: 'pull-api',
  tracing,
  config: { ...servicePort(8083), ...databaseConfig },
  compose: async ({ config, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'pull-api' });
    onClose(() => db.destroy());
    // Not wired here yet: the standalone pull API needs the identity settings, Redis, Kafka and
    // RECEIPT_HANDLE_KEY, which the chart does not give this Deployment yet (docs/delivery.md). Until
    // then its routes answer 501; the all-in-one process serves them.
    const pullApi = createPullApiService({ readiness: [databaseReadiness(db)] });
    return { listeners: [{ name: 'pull-api', host: config.HOST, port: config.PORT, services: [pullApi], renderError: violationBody }] };
  },
});
