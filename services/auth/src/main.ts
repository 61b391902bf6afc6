import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { busLimitSettings, busRequestLimits, createLimitMetrics } from '@bus/limits';
import { authConfig } from './config';
import { authServiceOf } from './service';

void bootstrap({
  name: 'auth',
  tracing,
  config: { ...servicePort(8081), ...databaseConfig, ...redisConfig, ...busLimitsConfig, ...authConfig },
  compose: async (ctx) => {
    const { config, logger, metrics } = ctx;
    const clients = processClients(ctx, 'auth');
    const postgres = clients.postgres();
    const redis = clients.redis();
    const limitMetrics = createLimitMetrics(metrics, 'auth');
    const auth = authServiceOf(
      { db: postgres.client, redis: redis.client, logger, metrics, limitMetrics, ready: { postgres: postgres.ready, redis: redis.ready } },
      config,
    );
    const middleware = [requestFirewall(), busRequestLimits(redis.client, busLimitSettings(config), limitMetrics)];
    return { listeners: [{ name: 'auth', host: config.HOST, port: config.PORT, services: [auth], renderError: violationBody, middleware }] };
  },
});
