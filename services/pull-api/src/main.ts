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
    const pullApi = createPullApiService({ readiness: [databaseReadiness(db)] });
    return { listeners: [{ name: 'pull-api', host: config.HOST, port: config.PORT, services: [pullApi], renderError: violationBody }] };
  },
});
