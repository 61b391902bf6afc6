import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '@bus/observability';
import type { DeliveryStore, QueueStats, SweepResult } from './delivery-store';
import { redriveRecord } from './redrive';

export interface QueueUpkeepDeps {
  store: DeliveryStore;
  metrics: Registry;
  logger: Logger;
  /** Consumer queue retention (spec §8: 14 days). */
  retentionMs: number;
  /** How often the retention sweep runs. */
  sweepIntervalMs: number;
  /**
   * How long after quarantine an `acceptance.missing` record is re-checked, every second; once more at
   * ten times that age. 0: never.
   */
  quarantineRecheckMs: number;
  now?: () => Date;
}

/** How often the `acceptance.missing` quarantines in their re-check window are looked at. */
const RECHECK_INTERVAL_MS = 1_000;
/** Most records one re-check looks at (oldest first); the rest wait for the next second. */
const RECHECK_LIMIT = 100;
/** The later look happens at this many times the re-check window's age. */
const LATER_LOOK_FACTOR = 10;

export interface QueueUpkeep {
  start(): void;
  stop(): Promise<void>;
  /** One retention sweep now (the timer calls it; tests too). */
  sweep(): Promise<SweepResult>;
  /** One re-check of the `acceptance.missing` quarantines due now (the timer calls it); resolves with how many it enqueued. */
  recheckQuarantine(): Promise<number>;
}

/**
 * The queues' upkeep: the retention sweep (bus_queue_expired_total counts un-acked deliveries it
 * dropped); the re-check of records quarantined as `acceptance.missing` — the gateway's commit can land
 * after delivery stopped waiting for it, and its 202 must still reach every consumer: each second,
 * those quarantined less than `quarantineRecheckMs` ago, and those of about ten times that age once
 * more, go through the operator's redrive (invariant A's check, idempotent enqueue), counted in
 * bus_delivery_quarantine_redriven_total; and, read from Postgres at each scrape, per consumer
 * connection: queue depth, messages in flight and the oldest message's age.
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

  const redriven = new Counter({
    name: 'bus_delivery_quarantine_redriven_total',
    help: 'Records quarantined as acceptance.missing that delivery enqueued by itself once their acceptance committed after its wait',
    registers: [deps.metrics],
  });
  const recheckQuarantine = async (): Promise<number> => {
    const windowMs = deps.quarantineRecheckMs;
    const laterMs = windowMs * LATER_LOOK_FACTOR;
    const due = await deps.store.quarantinedAged(
      'acceptance.missing',
      [
        { fromMs: 0, toMs: windowMs },
        // Two intervals wide, so a late timer never skips a record: one looked at twice costs a query.
        { fromMs: laterMs, toMs: laterMs + 2 * RECHECK_INTERVAL_MS },
      ],
      RECHECK_LIMIT,
    );
    let enqueued = 0;
    for (const record of due) {
      const result = await redriveRecord(deps.store, record);
      if (result.outcome !== 'redriven') continue;
      enqueued += 1;
      redriven.inc();
      deps.logger.info(result, 'delivery enqueued a record quarantined as acceptance.missing: its acceptance committed after the wait');
    }
    return enqueued;
  };

  let timer: NodeJS.Timeout | undefined;
  let recheckTimer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let rechecking: Promise<unknown> | undefined;
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
      if (deps.quarantineRecheckMs > 0) {
        recheckTimer = setInterval(() => {
          // One at a time: a slow Postgres makes the re-checks rarer, never pile up.
          rechecking ??= recheckQuarantine()
            .catch((err: unknown) => deps.logger.warn({ err }, 'quarantine re-check failed; the next second retries'))
            .finally(() => {
              rechecking = undefined;
            });
        }, RECHECK_INTERVAL_MS);
        recheckTimer.unref();
      }
    },
    stop: async () => {
      clearInterval(timer);
      clearInterval(recheckTimer);
      await Promise.all([running, rechecking]);
    },
    sweep,
    recheckQuarantine,
  };
}
