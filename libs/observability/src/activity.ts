import { Counter, type Registry } from 'prom-client';
import type { Logger } from './logger';
import { METRICS } from './metric-names';
import { SerialWrites } from './serial-writes';

/** The per-minute activity of one connection in one minute, as handed to the store at a flush. */
export interface ActivityRow {
  /** The minute's start (UTC, seconds and milliseconds zero). */
  minute: Date;
  connectionId: string;
  /** Messages the gateway accepted from this producer connection. */
  published: number;
  /** Publishes the gateway refused, by the rule id of the refusal. */
  refused: Record<string, number>;
  /** Deliveries created in this consumer connection's queue. */
  delivered: number;
  /** Deliveries this consumer connection acked (pull API and SQS door). */
  acked: number;
  /** The queue's last sample in the minute (consumer connections), null when none was taken. */
  queueDepth: number | null;
  oldestAgeSeconds: number | null;
}

/**
 * Counts the bus's activity per connection and minute in memory, and hands what it counted to the
 * store every few seconds in one write (docs/portal.md#activity-charts). The hot paths (publish,
 * enqueue, ack) only add to a map: no round trip per message. The counts are best effort: what was
 * counted since the last flush is lost if the process dies, and a failed write is logged, counted and
 * dropped rather than kept, so a slow or absent store never holds up or refuses anything and memory
 * stays bounded (at most `maxCells` connection-minutes, `MAX_RULES_PER_CELL` rules each).
 */
export interface ActivityRecorder {
  published(connectionId: string): void;
  refused(connectionId: string, rule: string): void;
  /** One consumer connection id per delivery created (the same id once per delivery). */
  delivered(connectionIds: readonly string[]): void;
  acked(connectionId: string, count: number): void;
  /** A sample of a consumer connection's queue; the minute keeps its last one. */
  queueSample(connectionId: string, depth: number, oldestAgeSeconds: number): void;
  /** Writes what was counted; resolves when written or dropped (never rejects). */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer and writes what is still counted. */
  stop(): Promise<void>;
}

export interface ActivityRecorderDeps {
  /** One write (one statement) of the rows counted since the last flush. */
  write(rows: readonly ActivityRow[]): Promise<void>;
  logger: Logger;
  metrics: Registry;
  /** How often counts are written (default ACTIVITY_FLUSH_MS). */
  intervalMs?: number;
  /** Connection-minutes held between flushes at most (default 10,000); counts of further ones are dropped and counted. */
  maxCells?: number;
  now?: () => number;
}

export const ACTIVITY_FLUSH_MS = 5_000;
/** A connection-minute keeps at most this many rule ids; the rest are counted under ACTIVITY_OTHER_RULE. */
export const MAX_RULES_PER_CELL = 20;
export const ACTIVITY_OTHER_RULE = 'other';
/** A rule id longer than this is counted under ACTIVITY_OTHER_RULE (the catalogue's ids are far shorter). */
const MAX_RULE_CHARS = 64;

interface Cell {
  minute: number;
  connectionId: string;
  published: number;
  refused: Map<string, number>;
  delivered: number;
  acked: number;
  queueDepth: number | null;
  oldestAgeSeconds: number | null;
}

export function createActivityRecorder(deps: ActivityRecorderDeps): ActivityRecorder {
  return new MinuteCounts(deps);
}

class MinuteCounts implements ActivityRecorder {
  private cells = new Map<string, Cell>();
  private readonly maxCells: number;
  private readonly now: () => number;
  private readonly outcomes: Counter;
  private readonly writes = new SerialWrites();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ActivityRecorderDeps) {
    this.maxCells = deps.maxCells ?? 10_000;
    this.now = deps.now ?? Date.now;
    this.outcomes = new Counter({
      ...METRICS.activityFlushes,
      help: 'Flushes of the per-minute activity counts (portal charts), by outcome (written; failed: the store refused the write, its counts dropped; skipped: the previous write was still running); dropped_full counts connection-minutes dropped because the bound was reached',
      registers: [deps.metrics],
    });
  }

  published(connectionId: string): void {
    const cell = this.cell(connectionId);
    if (cell) cell.published += 1;
  }

  refused(connectionId: string, rule: string): void {
    const cell = this.cell(connectionId);
    if (!cell) return;
    const known = cell.refused.has(rule) || (cell.refused.size < MAX_RULES_PER_CELL - 1 && rule.length <= MAX_RULE_CHARS);
    const key = known ? rule : ACTIVITY_OTHER_RULE;
    cell.refused.set(key, (cell.refused.get(key) ?? 0) + 1);
  }

  delivered(connectionIds: readonly string[]): void {
    for (const id of connectionIds) {
      const cell = this.cell(id);
      if (cell) cell.delivered += 1;
    }
  }

  acked(connectionId: string, count: number): void {
    if (count <= 0) return;
    const cell = this.cell(connectionId);
    if (cell) cell.acked += count;
  }

  queueSample(connectionId: string, depth: number, oldestAgeSeconds: number): void {
    const cell = this.cell(connectionId);
    if (!cell) return;
    cell.queueDepth = depth;
    cell.oldestAgeSeconds = oldestAgeSeconds;
  }

  flush(): Promise<void> {
    return this.writes.run(() => this.write());
  }

  start(): void {
    this.timer ??= setInterval(() => {
      // A write still running (a slow store) is not queued behind: the counts go on adding up meanwhile.
      if (this.writes.busy) this.outcomes.inc({ outcome: 'skipped' });
      else void this.flush();
    }, this.deps.intervalMs ?? ACTIVITY_FLUSH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** The cell of the connection's current minute, or undefined when the bound is reached (counted). */
  private cell(connectionId: string): Cell | undefined {
    const minute = Math.floor(this.now() / 60_000) * 60_000;
    const key = `${minute} ${connectionId}`;
    const found = this.cells.get(key);
    if (found) return found;
    if (this.cells.size >= this.maxCells) {
      this.outcomes.inc({ outcome: 'dropped_full' });
      return undefined;
    }
    const cell: Cell = { minute, connectionId, published: 0, refused: new Map(), delivered: 0, acked: 0, queueDepth: null, oldestAgeSeconds: null };
    this.cells.set(key, cell);
    return cell;
  }

  private async write(): Promise<void> {
    if (this.cells.size === 0) return;
    const cells = [...this.cells.values()];
    this.cells = new Map();
    try {
      await this.deps.write(cells.map(rowOf));
      this.outcomes.inc({ outcome: 'written' });
    } catch (err) {
      this.outcomes.inc({ outcome: 'failed' });
      this.deps.logger.warn({ err, connection_minutes: cells.length }, 'activity counts could not be written; these counts are dropped');
    }
  }
}

function rowOf(c: Cell): ActivityRow {
  return {
    minute: new Date(c.minute),
    connectionId: c.connectionId,
    published: c.published,
    refused: Object.fromEntries(c.refused),
    delivered: c.delivered,
    acked: c.acked,
    queueDepth: c.queueDepth,
    oldestAgeSeconds: c.oldestAgeSeconds,
  };
}
