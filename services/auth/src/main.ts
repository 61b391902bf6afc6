import { tracing } from './instrument';
import { databaseConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseReadiness } from '@bus/db';
import { bootstrap, violationBody } from '@bus/http';
import { createRedis, redisReadiness } from '@bus/limits';
import { createAuthService } from './service';

void bootstrap({
  name: 'auth',
  tracing,
  config: { ...servicePort(8081), ...databaseConfig, ...redisConfig },
  compose: async ({ config, logger, onClose }) => {
    const db = createDatabase({ url: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX, applicationName: 'auth' });
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger);
    onClose(() => redis.disconnect());
    const auth = createAuthService({ readiness: [databaseReadiness(db), redisReadiness(redis)] });
    return { listeners: [{ name: 'auth', host: config.HOST, port: config.PORT, services: [auth], renderError: violationBody }] };
  },
});
