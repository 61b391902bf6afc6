import { tracing } from './instrument';
import { redisConfig, servicePort } from '@bus/config';
import { bootstrap, codeBody } from '@bus/http';
import { createLimitMetrics, createRedis, redisReadiness } from '@bus/limits';
import { createCatalogueService } from './service';

void bootstrap({
  name: 'catalogue',
  tracing,
  config: { ...servicePort(8091), ...redisConfig },
  compose: async ({ config, logger, metrics, onClose }) => {
    const redis = createRedis(config.REDIS_URL, logger, { keyPrefix: config.REDIS_KEY_PREFIX });
    onClose(() => redis.disconnect());
    const catalogue = createCatalogueService({ redis, readiness: [redisReadiness(redis)], limitMetrics: createLimitMetrics(metrics, 'catalogue') });
    return { listeners: [{ name: 'catalogue', host: config.HOST, port: config.PORT, services: [catalogue], renderError: codeBody }] };
  },
});
