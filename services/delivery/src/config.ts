import { duration, optional, str, type ConfigOf } from '@bus/config';
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
    retention: retentionSettings(config),
  };
}
