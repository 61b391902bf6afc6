import { databaseConfig, loadConfig, processConfig } from '@bus/config';
import { useTestDatabase } from '@bus/fixtures';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { processClients } from './clients';

// The process's clients on a real Postgres, closed as bootstrap closes them: last registered first.
const database = useTestDatabase({ applicationName: 'composition-test' });

it('has one activity recorder per process, whose last counts are written at close, before Postgres closes', async () => {
  const { connectionIds } = await database.tenancy.tenant({ connections: [{ kind: 'producer' }] });
  const producer = connectionIds[0]!;
  const closers: Array<() => Promise<unknown> | void> = [];
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const clients = processClients(
    {
      config: loadConfig({ ...processConfig, ...databaseConfig }, { DATABASE_URL: database.url, DATABASE_POOL_MAX: '1' }),
      logger: createLogger({ service: 'test', level: 'silent' }),
      metrics,
      onClose: (close) => void closers.push(close),
    },
    'composition-test',
  );
  const activity = clients.activity();
  expect(clients.activity()).toBe(activity);

  activity.published(producer);
  activity.published(producer);
  for (const close of closers.reverse()) await close();

  expect(await database.db('activity_minutes').where({ connection_id: producer }).select('published')).toEqual([{ published: '2' }]);
  const flushes = (await metrics.getSingleMetric('bus_activity_flushes_total')!.get()).values;
  expect(flushes).toEqual([expect.objectContaining({ labels: { outcome: 'written' }, value: 1 })]);
});
