import { Gauge, type Registry } from 'prom-client';
import { METRICS, throttledWarning, type Logger } from '@bus/observability';
import type { QueueStats } from '@bus/contracts';
import type { DeliveryStore } from '@bus/queue';

export interface QueueGaugesDeps {
  store: DeliveryStore;
  /** The workspace of each consumer connection id (libs/db readConnectionWorkspaces). */
  workspacesOf: (consumerIds: readonly string[]) => Promise<Map<string, string>>;
  metrics: Registry;
  logger: Logger;
  now?: () => Date;
}

/** The queues' depth and oldest age now (the gauges' cached read): the activity charts' samples. */
export interface QueueSampler {
  /** Every consumer connection with an un-acked delivery; an empty queue has no row. */
  sample(): Promise<Array<{ consumerId: string; depth: number; oldestAgeSeconds: number }>>;
}

/**
 * The queues' gauges, read from Postgres at each scrape (cached 1 s), per consumer connection and its
 * workspace: queue depth, messages in flight and the oldest message's age. A connection never moves
 * between workspaces, so each one's workspace is read once. The queues' retention is the retention
 * sweep's (retention.ts).
 *
 * While Postgres cannot be read, the gauges serve the last read, the oldest age still counted from
 * the clock: nothing is enqueued or acked without Postgres, so the queues are as last read (only
 * leases that ran out are still counted in flight), and BusConsumerQueueOldestMessageAge keeps
 * firing through the outage instead of resolving because its series went away.
 */
export function registerQueueGauges(deps: QueueGaugesDeps): QueueSampler {
  const now = deps.now ?? (() => new Date());
  const oldestAge = (s: QueueStats) => Math.max(0, (now().getTime() - s.oldestEnqueuedAt.getTime()) / 1000);
  const workspaces = new Map<string, string>();
  const read = async (): Promise<Array<QueueStats & { workspace: string }>> => {
    const all = await deps.store.queueStats();
    const unknown = all.map((s) => s.consumerId).filter((id) => !workspaces.has(id));
    if (unknown.length > 0) for (const [id, workspace] of await deps.workspacesOf(unknown)) workspaces.set(id, workspace);
    // A connection removed since its deliveries were counted has no workspace left to name.
    return all.flatMap((s) => {
      const workspace = workspaces.get(s.consumerId);
      return workspace === undefined ? [] : [{ ...s, workspace }];
    });
  };
  let cached: { at: number; stats: Promise<Array<QueueStats & { workspace: string }>> } | undefined;
  let lastRead: Array<QueueStats & { workspace: string }> = [];
  const stats = () => {
    if (!cached || Date.now() - cached.at > 1_000)
      cached = {
        at: Date.now(),
        stats: read().then((s) => (lastRead = s)),
      };
    return cached.stats;
  };
  // Each of the four gauges fails at each scrape while Postgres is away: one line per 10 s.
  const unreadable = throttledWarning(deps.logger, 'queue metrics could not be read; serving the last read');
  const gauge = (
    metric: (typeof METRICS)['queueDepth' | 'queueInFlight' | 'queueDeadLetters' | 'queueOldestAge'],
    help: string,
    value: (s: QueueStats) => number,
  ) =>
    new Gauge({
      ...metric,
      help,
      registers: [deps.metrics],
      async collect() {
        let current: Array<QueueStats & { workspace: string }>;
        try {
          current = await stats();
        } catch (err) {
          unreadable({ err });
          current = lastRead;
        }
        this.reset();
        for (const s of current) this.set({ workspace: s.workspace, consumer: s.consumerId }, value(s));
      },
    });
  gauge(METRICS.queueDepth, 'Un-acked deliveries per consumer connection', (s) => s.depth);
  gauge(METRICS.queueInFlight, 'Deliveries leased and not yet acked, nacked or expired, per consumer connection', (s) => s.inFlight);
  gauge(
    METRICS.queueDeadLetters,
    'Open dead letters per consumer connection (each blocks its correlation id until redriven or discarded)',
    (s) => s.deadLetters,
  );
  gauge(METRICS.queueOldestAge, 'Age of the oldest un-acked delivery per consumer connection', oldestAge);
  return {
    sample: async () => (await stats()).map((s) => ({ consumerId: s.consumerId, depth: s.depth, oldestAgeSeconds: oldestAge(s) })),
  };
}
