import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '@bus/observability';
import type { QueueStats } from '@bus/contracts';
import type { DeliveryStore } from '@bus/queue';

export interface QueueGaugesDeps {
  store: DeliveryStore;
  metrics: Registry;
  logger: Logger;
  now?: () => Date;
}

/**
 * The queues' gauges, read from Postgres at each scrape (cached 1 s), per consumer connection: queue
 * depth, messages in flight and the oldest message's age. The queues' retention is the retention
 * sweep's (retention.ts).
 */
export function registerQueueGauges(deps: QueueGaugesDeps): void {
  const now = deps.now ?? (() => new Date());
  let cached: { at: number; stats: Promise<QueueStats[]> } | undefined;
  const stats = () => {
    if (!cached || Date.now() - cached.at > 1_000) {
      cached = { at: Date.now(), stats: deps.store.queueStats() };
    }
    return cached.stats;
  };
  const gauge = (name: string, help: string, value: (s: QueueStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['consumer'],
      registers: [deps.metrics],
      async collect() {
        this.reset();
        try {
          for (const s of await stats()) this.set({ consumer: s.consumerId }, value(s));
        } catch (err) {
          deps.logger.warn({ err }, 'queue metrics could not be read');
        }
      },
    });
  gauge('bus_queue_depth', 'Un-acked deliveries per consumer connection', (s) => s.depth);
  gauge('bus_queue_in_flight', 'Deliveries leased and not yet acked, nacked or expired, per consumer connection', (s) => s.inFlight);
  gauge(
    'bus_queue_dead_letters',
    'Open dead letters per consumer connection (each blocks its correlation id until redriven or discarded)',
    (s) => s.deadLetters,
  );
  gauge('bus_queue_oldest_age_seconds', 'Age of the oldest un-acked delivery per consumer connection', (s) =>
    Math.max(0, (now().getTime() - s.oldestEnqueuedAt.getTime()) / 1000),
  );
}
