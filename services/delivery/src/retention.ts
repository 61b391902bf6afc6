import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { oldestRowAt, sweepBatch, type Knex, type RetentionEntry } from '@bus/db';
import { RETENTION_TABLES, type RetentionSettings } from '@bus/queue';
import { METRICS, type Logger } from '@bus/observability';

export interface RetentionSweeperDeps {
  db: Knex;
  metrics: Registry;
  logger: Logger;
  settings: RetentionSettings;
  /** The tables swept, in order; the registry of libs/db unless a test narrows it. */
  entries?: readonly RetentionEntry[];
  /** The clock windows are counted on; tests pass a controllable one. */
  now?: () => Date;
}

/** What one sweep did to one table. */
export interface TableSweep {
  removed: number;
  /** Batch statements that removed rows. */
  batches: number;
}

export interface SweepReport {
  /** Per table; a table is missing when another instance held the sweep lock before it was reached. */
  tables: Record<string, TableSweep>;
  /** True when another instance was sweeping, so this one left the rest to it. */
  yielded: boolean;
}

export interface RetentionSweeper {
  start(): void;
  /** Ends the timer and waits for a sweep in progress, which stops after its current batch. */
  stop(): Promise<void>;
  /** One sweep now (the timer calls it; tests too). */
  sweep(): Promise<SweepReport>;
}

/**
 * Bounded storage (docs/operations.md, "Retention"): every interval, each table of the registry loses
 * the rows older than its window, in batches of at most `batchSize` rows, one short transaction each,
 * while the bus goes on. Every instance runs the timer; the sweep lock lets one at a time remove rows.
 * After each sweep every instance reads when each table's oldest remaining row began to age, so
 * /metrics shows the ages (and the alert fires) whichever instance swept, or when none could.
 */
export function createRetentionSweeper(deps: RetentionSweeperDeps): RetentionSweeper {
  const now = deps.now ?? (() => new Date());
  const entries = deps.entries ?? RETENTION_TABLES;
  const windowOf = (entry: RetentionEntry): number => {
    const ms = deps.settings.windows[entry.window.variable];
    if (ms === undefined) throw new Error(`no retention window configured for ${entry.window.variable}`);
    return ms;
  };
  const removed = new Counter({
    ...METRICS.retentionRowsRemoved,
    help: 'Rows the retention sweep removed, per table',
    registers: [deps.metrics],
  });
  const duration = new Histogram({
    ...METRICS.retentionSweepDuration,
    help: 'How long one sweep of one table took (all its batches)',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
    registers: [deps.metrics],
  });
  new Gauge({
    ...METRICS.retentionWindow,
    help: 'The retention window of each table',
    registers: [deps.metrics],
    collect() {
      for (const entry of entries) this.set({ table: entry.table }, windowOf(entry) / 1000);
    },
  });
  // When each table's oldest row (that nothing keeps) began to age, as the last sweep read it; null: empty.
  const oldest = new Map<string, Date | null>();
  new Gauge({
    ...METRICS.retentionOldestRowAge,
    help: 'Age of the oldest row of each table that its window applies to (0 when none)',
    registers: [deps.metrics],
    collect() {
      this.reset();
      for (const [table, at] of oldest) this.set({ table }, at === null ? 0 : Math.max(0, (now().getTime() - at.getTime()) / 1000));
    },
  });

  let stopping = false;
  const sweepTable = async (entry: RetentionEntry, cutoff: Date): Promise<TableSweep | null> => {
    const result: TableSweep = { removed: 0, batches: 0 };
    const endTimer = duration.startTimer({ table: entry.table });
    try {
      while (!stopping) {
        const n = await sweepBatch(deps.db, entry, cutoff, deps.settings.batchSize);
        if (n === null) return null;
        if (n > 0) {
          result.removed += n;
          result.batches++;
          removed.inc({ table: entry.table }, n);
        }
        if (n < deps.settings.batchSize) break;
      }
    } finally {
      endTimer();
    }
    return result;
  };

  const sweep = async (): Promise<SweepReport> => {
    const report: SweepReport = { tables: {}, yielded: false };
    const at = now();
    const cutoffOf = (entry: RetentionEntry) => new Date(at.getTime() - windowOf(entry));
    try {
      for (const entry of entries) {
        if (stopping) break;
        const result = await sweepTable(entry, cutoffOf(entry));
        if (result === null) {
          report.yielded = true;
          break;
        }
        report.tables[entry.table] = result;
        if (result.removed > 0) deps.logger.info({ table: entry.table, ...result }, 'retention sweep removed rows');
      }
    } finally {
      // Even when a table failed: the ages then show how far behind the sweep is.
      for (const entry of entries) {
        try {
          oldest.set(entry.table, await oldestRowAt(deps.db, entry, cutoffOf(entry)));
        } catch (err) {
          deps.logger.warn({ err, table: entry.table }, 'retention: the oldest row could not be read');
        }
      }
    }
    return report;
  };

  let timer: NodeJS.Timeout | undefined;
  // The sweep in progress: an interval that finds one (a long backlog) lets it run on.
  let running: Promise<void> | undefined;
  return {
    start: () => {
      stopping = false;
      timer = setInterval(() => {
        running ??= sweep()
          .then(
            () => undefined,
            (err: unknown) => deps.logger.error({ err }, 'retention sweep failed; the next interval retries'),
          )
          .finally(() => {
            running = undefined;
          });
      }, deps.settings.intervalMs);
      timer.unref();
    },
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await running;
    },
    sweep,
  };
}
