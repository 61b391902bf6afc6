import { Client } from 'pg';
import { DELIVERY_CHANNEL } from '@bus/db';
import type { Logger } from '@bus/observability';

/**
 * Wakes long polls when a consumer's queue gets work: one dedicated Postgres connection LISTENs on
 * the delivery channel (delivery NOTIFYs at its COMMIT, nack too) and calls the waiters of that
 * consumer in this process. No polling: a waiter sleeps until a notification or its own deadline.
 */
export interface QueueNotifier {
  /** Calls `wake` on the next notification for `consumerId`; returns the unsubscribe. */
  subscribe(consumerId: string, wake: () => void): () => void;
  /** Wakes the waiters of `consumerId` in this process (after a change made here). */
  notifyLocal(consumerId: string): void;
  /** Wakes every waiter for good: the process is shutting down, so each long poll answers what it reads next. */
  drain(): void;
  /** Whether drain was called: a receive then answers without waiting. */
  readonly draining: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createPgQueueNotifier(opts: { url: string; logger: Logger }): QueueNotifier {
  const waiters = new Map<string, Set<() => void>>();
  let client: Client | undefined;
  let stopped = false;
  let draining = false;

  const wakeAll = (consumerId?: string) => {
    const targets = consumerId === undefined ? [...waiters.values()] : [waiters.get(consumerId) ?? new Set<() => void>()];
    for (const set of targets) for (const wake of [...set]) wake();
  };

  // Tries again every 500 ms until it is back: a failed connect reports to its caller only (pg emits
  // no 'error' for it), so each failed attempt schedules the next, for as long as Postgres is away.
  // One attempt at a time: a failure that is both an 'error' event and a rejection schedules one.
  let reconnectTimer: NodeJS.Timeout | undefined;
  const reconnectSoon = (): void => {
    if (stopped || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect().then(
        () => opts.logger.info('delivery LISTEN connection restored'),
        () => reconnectSoon(),
      );
    }, 500);
  };

  const connect = async (): Promise<void> => {
    const c = new Client({ connectionString: opts.url, application_name: 'pull-api-listen' });
    c.on('notification', (n) => {
      if (n.channel === DELIVERY_CHANNEL && n.payload) wakeAll(n.payload);
    });
    c.on('error', (err) => {
      opts.logger.warn({ err }, 'delivery LISTEN connection failed; reconnecting');
      void c.end().catch(() => undefined);
      // Anything notified while down is missed: wake every waiter so each re-reads its queue.
      wakeAll();
      reconnectSoon();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${DELIVERY_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    if (stopped) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    // After a reconnect: what was notified while the connection was away is missed, so every waiter re-reads its queue.
    wakeAll();
  };

  return {
    subscribe: (consumerId, wake) => {
      let set = waiters.get(consumerId);
      if (!set) waiters.set(consumerId, (set = new Set()));
      set.add(wake);
      return () => {
        set.delete(wake);
        if (set.size === 0 && waiters.get(consumerId) === set) waiters.delete(consumerId);
      };
    },
    notifyLocal: (consumerId) => wakeAll(consumerId),
    drain: () => {
      draining = true;
      wakeAll();
    },
    get draining() {
      return draining;
    },
    start: () => connect(),
    stop: async () => {
      stopped = true;
      clearTimeout(reconnectTimer);
      wakeAll();
      await client?.end().catch(() => undefined);
    },
  };
}
