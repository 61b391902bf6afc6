import { tracing } from './instrument';
import { servicePort } from '@bus/config';
import { bootstrap, codeBody } from '@bus/http';
import { createCatalogueService } from './service';

void bootstrap({
  name: 'catalogue',
  tracing,
  config: servicePort(8091),
  compose: async ({ config }) => ({
    listeners: [{ name: 'catalogue', host: config.HOST, port: config.PORT, services: [createCatalogueService()], renderError: codeBody }],
  }),
});
