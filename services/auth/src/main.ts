import { tracing } from './instrument';
import { busLimitsConfig, databaseConfig, redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, requestFirewall, violationBody } from '@bus/http';
import { busLimitSettings, busRequestLimits, createLimitMetrics } from '@bus/limits';
import { authConfig, authDepsOf } from './config';
import { createAuthService } from './service';

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
    const auth = createAuthService({
      ...authDepsOf({ db: postgres.client, redis: redis.client, logger, metrics, limitMetrics }, config),
      readiness: [postgres.ready, redis.ready],
    });
    const middleware = [requestFirewall(), busRequestLimits(redis.client, busLimitSettings(config), limitMetrics)];
    return { listeners: [{ name: 'auth', host: config.HOST, port: config.PORT, services: [auth], renderError: violationBody, middleware }] };
  },
});
