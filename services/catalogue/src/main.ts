import { tracing } from './instrument';
import { redisConfig, servicePort } from '@bus/config';
import { processClients } from '@bus/composition';
import { bootstrap, codeBody } from '@bus/http';
import { createLimitMetrics } from '@bus/limits';
import { createCatalogueService } from './service';

void bootstrap({
  name: 'catalogue',
  tracing,
  config: { ...servicePort(8091), ...redisConfig },
  compose: async (ctx) => {
    const redis = processClients(ctx, 'catalogue').redis();
    const catalogue = createCatalogueService({ redis: redis.client, readiness: [redis.ready], limitMetrics: createLimitMetrics(ctx.metrics, 'catalogue') });
    return { listeners: [{ name: 'catalogue', host: ctx.config.HOST, port: ctx.config.PORT, services: [catalogue], renderError: codeBody }] };
  },
});
