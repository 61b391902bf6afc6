import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '@bus/observability';
import type { DeliveryStore, QueueStats, SweepResult } from './delivery-store';

export interface QueueUpkeepDeps {
  store: DeliveryStore;
  metrics: Registry;
  logger: Logger;
  /** Consumer queue retention (spec §8: 14 days). */
  retentionMs: number;
  /** How often the retention sweep runs. */
  sweepIntervalMs: number;
  now?: () => Date;
}

export interface QueueUpkeep {
  start(): void;
  stop(): Promise<void>;
  /** One retention sweep now (the timer calls it; tests too). */
  sweep(): Promise<SweepResult>;
}

/**
 * The queues' upkeep: the retention sweep (bus_queue_expired_total counts un-acked deliveries it
 * dropped) and, read from Postgres at each scrape, per consumer connection: queue depth, messages in
 * flight and the oldest message's age.
 */
export function createQueueUpkeep(deps: QueueUpkeepDeps): QueueUpkeep {
  const now = deps.now ?? (() => new Date());
  const expired = new Counter({
    name: 'bus_queue_expired_total',
    help: 'Deliveries removed un-acked by the consumer queue retention (14 days)',
    registers: [deps.metrics],
  });
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
  gauge('bus_queue_oldest_age_seconds', 'Age of the oldest un-acked delivery per consumer connection', (s) =>
    Math.max(0, (now().getTime() - s.oldestEnqueuedAt.getTime()) / 1000),
  );

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const sweep = async (): Promise<SweepResult> => {
    const result = await deps.store.sweep(new Date(now().getTime() - deps.retentionMs), 1_000);
    expired.inc(result.expired);
    if (result.expired + result.acked + result.messages > 0) deps.logger.info({ ...result }, 'queue retention sweep');
    return result;
  };
  return {
    start: () => {
      timer = setInterval(() => {
        running = sweep().catch((err: unknown) =>
          deps.logger.warn({ err }, 'queue retention sweep failed; next interval retries'),
        );
      }, deps.sweepIntervalMs);
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
    sweep,
  };
}
