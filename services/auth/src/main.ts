import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, redisConfig, servicePort } from '@bus/config';
import { createDatabase, databaseOptionsOf, databaseReadiness } from '@bus/db';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { busLimitSettings, busRequestLimits, createLimitMetrics, createRedis, redisReadiness } from '@bus/limits';
import { authConfig } from './config';
import { createAuthService } from './service';

void bootstrap({
  name: 'auth',
  tracing,
  config: { ...servicePort(8081), ...databaseConfig, ...redisConfig, ...busLimitsConfig, ...authConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const db = createDatabase(databaseOptionsOf(config, 'auth'));
    onClose(() => db.destroy());
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    const limitMetrics = createLimitMetrics(metrics, 'auth');
    const auth = createAuthService({
      db,
      redis,
      logger,
      baseUrl: config.BUS_BASE_URL,
      signingKeyEncryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY,
      rotationIntervalMs: config.SIGNING_KEY_ROTATION_INTERVAL,
      readiness: [databaseReadiness(db), redisReadiness(redis)],
      metrics,
      limitMetrics,
    });
    const middleware = [requestFirewall(), busRequestLimits(redis, busLimitSettings(config), limitMetrics)];
    return { listeners: [{ name: 'auth', host: config.HOST, port: config.PORT, services: [auth], renderError: violationBody, middleware }] };
  },
});
