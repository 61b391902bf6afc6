import { ConfigError, duration, optional, str, type ConfigOf } from '@bus/config';
import { retentionConfig, retentionSettings } from '@bus/queue';

/** Delivery's own variables (on top of Postgres and Kafka). */
export const deliveryConfig = {
  /**
   * Kafka consumer group of the delivery processes of one environment. Unset: `bus.delivery.<database
   * name>`, so one group feeds one set of queues and two buses on one Kafka never split a group.
   */
  DELIVERY_GROUP_ID: optional(str({ pattern: /^[A-Za-z0-9._-]{1,200}$/ })),
  /**
   * How long a record waits for the gateway's commit of its acceptance before quarantine (invariant A).
   * Three times the gateway's PUBLISH_COMMIT_TIMEOUT (5 s): a commit the gateway finished within its
   * bound always lands inside this wait (docs/operations.md, "Dependency outages").
   */
  DELIVERY_ACCEPTANCE_WAIT: duration({ default: 15_000, max: 60_000 }),
  /**
   * How long after quarantining a record as `acceptance.missing` delivery keeps re-checking it (every
   * second), enqueueing it once its acceptance committed after all; it looks once more at ten times
   * this age. Twice the acceptance wait by default: well past the gateway's PUBLISH_COMMIT_TIMEOUT (5 s),
   * so a commit that outlived the wait still reaches its consumers (docs/delivery.md). 0s: off.
   */
  DELIVERY_QUARANTINE_RECHECK: duration({ default: 30_000, max: 3_600_000 }),
  /**
   * The delivery consumer's Kafka session: how long partitions of a process that died without leaving
   * its group (SIGKILL, a lost node) wait before another process takes them over, and how long a
   * stalled process (GC pause, CPU starvation) may go without a heartbeat before its partitions are
   * taken away (docs/operations.md, "Delivery failover"). Unset: 3 s, or the broker's
   * group.min.session.timeout.ms when that is longer; set below it, delivery does not start.
   */
  DELIVERY_SESSION_TIMEOUT: optional(duration({ min: 1_000, max: 300_000 })),
  /** Every table's retention window and the sweep's pace (libs/queue retention.ts). */
  ...retentionConfig,
} as const;

/** The default group of the delivery processes writing to the database of `databaseUrl`. */
export function defaultDeliveryGroupId(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
  return `bus.delivery.${name.replace(/[^A-Za-z0-9._-]/g, '_')}`;
}

/** The delivery service's settings from its configuration: one mapping for every composition root. */
export function deliverySettings(config: ConfigOf<typeof deliveryConfig> & { DATABASE_URL: string; KAFKA_MESSAGES_RETENTION: number }) {
  return {
    groupId: config.DELIVERY_GROUP_ID ?? defaultDeliveryGroupId(config.DATABASE_URL),
    acceptanceWaitMs: config.DELIVERY_ACCEPTANCE_WAIT,
    quarantineRecheckMs: config.DELIVERY_QUARANTINE_RECHECK,
    sessionTimeoutMs: config.DELIVERY_SESSION_TIMEOUT,
    retention: retentionSettings(config),
  };
}

/** The session delivery asks for when DELIVERY_SESSION_TIMEOUT is unset and the broker allows it. */
const DEFAULT_SESSION_TIMEOUT_MS = 3_000;
/** Kafka's own default of group.min.session.timeout.ms, assumed when the broker does not tell. */
const KAFKA_DEFAULT_MIN_SESSION_MS = 6_000;

/**
 * The delivery consumer's session from DELIVERY_SESSION_TIMEOUT and the broker's shortest allowed
 * one: a session below it would have every join refused, so that is a configuration error naming the
 * variable, found at start-up rather than as a consumer that never joins.
 */
export function deliverySessionTimeout(configuredMs: number | undefined, brokerMinimumMs: number | undefined): number {
  if (configuredMs === undefined) return Math.max(DEFAULT_SESSION_TIMEOUT_MS, brokerMinimumMs ?? KAFKA_DEFAULT_MIN_SESSION_MS);
  if (brokerMinimumMs !== undefined && configuredMs < brokerMinimumMs) {
    throw new ConfigError([
      {
        variable: 'DELIVERY_SESSION_TIMEOUT',
        problem: `must be at least the broker's group.min.session.timeout.ms (${brokerMinimumMs}ms), got ${configuredMs}ms`,
      },
    ]);
  }
  return configuredMs;
}
