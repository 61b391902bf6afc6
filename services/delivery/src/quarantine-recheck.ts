import { Counter, type Registry } from 'prom-client';
import { METRICS, throttledWarning, type Logger } from '@bus/observability';
import { redriveRecord, type DeliveryStore } from '@bus/queue';

export interface QuarantineRecheckDeps {
  store: DeliveryStore;
  metrics: Registry;
  logger: Logger;
  /**
   * How long after quarantine an `acceptance.missing` record is re-checked, every second; once more at
   * ten times that age. 0: never.
   */
  quarantineRecheckMs: number;
}

/** How often the `acceptance.missing` quarantines in their re-check window are looked at. */
const RECHECK_INTERVAL_MS = 1_000;
/** Most records one re-check looks at (oldest first); the rest wait for the next second. */
const RECHECK_LIMIT = 100;
/** The later look happens at this many times the re-check window's age. */
const LATER_LOOK_FACTOR = 10;

export interface QuarantineRecheck {
  start(): void;
  stop(): Promise<void>;
  /** One re-check of the `acceptance.missing` quarantines due now (the timer calls it); resolves with how many it enqueued. */
  recheckQuarantine(): Promise<number>;
}

/**
 * The re-check of records quarantined as `acceptance.missing`: the gateway's commit can land after
 * delivery stopped waiting for it, and its 202 must still reach every consumer. Each second, those
 * quarantined less than `quarantineRecheckMs` ago, and those of about ten times that age once more,
 * go through the operator's redrive (invariant A's check, idempotent enqueue), counted in
 * bus_delivery_quarantine_redriven_total.
 */
export function createQuarantineRecheck(deps: QuarantineRecheckDeps): QuarantineRecheck {
  const redriven = new Counter({
    ...METRICS.deliveryQuarantineRedriven,
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
  let rechecking: Promise<unknown> | undefined;
  // Every second while Postgres is away: one line per 10 s, not a stack a second per replica.
  const failed = throttledWarning(deps.logger, 'quarantine re-check failed; retried every second');
  return {
    start: () => {
      if (deps.quarantineRecheckMs <= 0) return;
      timer = setInterval(() => {
        // One at a time: a slow Postgres makes the re-checks rarer, never pile up.
        rechecking ??= recheckQuarantine()
          .catch((err: unknown) => failed({ err }))
          .finally(() => {
            rechecking = undefined;
          });
      }, RECHECK_INTERVAL_MS);
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await rechecking;
    },
    recheckQuarantine,
  };
}
