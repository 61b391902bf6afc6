import type { Registry } from 'prom-client';
import type { Knex, RetentionSettings } from '@bus/db';
import type { ReadinessCheck, Service } from '@bus/http';
import { MESSAGES_TOPIC, runBatches, type Consumer, type Kafka } from '@bus/kafka';
import type { Logger } from '@bus/observability';
import { KnexDeliveryStore } from './delivery-store';
import { createRecordEnqueuer } from './enqueue';
import { registerQueueGauges } from './queue-gauges';
import { createRetentionSweeper } from './retention';

/** Longest a fetch waits on an idle topic; also bounds how long stop() waits for it. */
const FETCH_WAIT_MS = 250;
/**
 * Partitions one delivery process handles side by side. Order only matters within a partition (one
 * correlation id lives on one), and a record waiting for its acceptance (invariant A) then holds up
 * its own partition only. Each partition in flight uses one Postgres connection at a time.
 */
const PARTITIONS_CONCURRENTLY = 4;

export interface DeliveryServiceDeps {
  /** Postgres (queues) and Kafka (bus.messages.v1) readiness. */
  readiness: ReadinessCheck[];
  db: Knex;
  kafka: Kafka;
  logger: Logger;
  metrics: Registry;
  /** Kafka consumer group; every delivery process of one environment shares it. */
  groupId: string;
  /** How long a record waits for its acceptance to commit before it is quarantined. */
  acceptanceWaitMs: number;
  /** The retention windows and how the sweep runs (docs/operations.md, "Retention"). */
  retention: RetentionSettings;
  /** The messages topic; tests use their own. */
  topic?: string;
}

/**
 * Delivery: consumes bus.messages.v1 into one queue per consumer connection (DESIGN §4), and runs the
 * retention sweep of every table the bus writes (docs/operations.md). It has no routes of its own; its process serves /healthz, /readyz and /metrics only. Offsets are committed
 * only after the record's Postgres transaction committed (runBatches), so a crash replays records,
 * and enqueueing is idempotent on (consumer, message_id), so a replay makes no second copy.
 */
export function createDeliveryService(deps: DeliveryServiceDeps): Service {
  const store = KnexDeliveryStore.create(deps.db);
  registerQueueGauges({ store, metrics: deps.metrics, logger: deps.logger });
  const retention = createRetentionSweeper({ db: deps.db, metrics: deps.metrics, logger: deps.logger, settings: deps.retention });
  const handle = createRecordEnqueuer({
    store,
    logger: deps.logger,
    metrics: deps.metrics,
    acceptanceWaitMs: deps.acceptanceWaitMs,
  });
  const topic = deps.topic ?? MESSAGES_TOPIC;
  let consumer: Consumer | undefined;
  let joined = false;
  const groupJoined: ReadinessCheck = {
    name: 'delivery-consumer',
    check: async () => {
      if (!joined) throw new Error('the delivery consumer has not joined its group yet');
    },
  };
  return {
    name: 'delivery',
    routers: [],
    readiness: [...deps.readiness, groupJoined],
    start: async () => {
      retention.start();
      consumer = deps.kafka.consumer({
        // libs/kafka's createConsumer settings, with a short fetch wait: a disconnect waits for the
        // fetch in flight, and the default 5 s wait made every shutdown seconds longer.
        groupId: deps.groupId,
        sessionTimeout: 30_000,
        heartbeatInterval: 3_000,
        allowAutoTopicCreation: false,
        maxWaitTimeInMs: FETCH_WAIT_MS,
      });
      consumer.on(consumer.events.GROUP_JOIN, () => {
        joined = true;
      });
      consumer.on(consumer.events.CRASH, () => {
        joined = false;
      });
      await consumer.connect();
      // A group without committed offsets reads the topic from its start (invariant B: a record
      // produced while a new group was still joining is not skipped). Records of workspaces this
      // database does not have are skipped at the cost of one cached lookup; enqueueing is idempotent.
      await consumer.subscribe({ topic, fromBeginning: true });
      await runBatches(
        consumer,
        async (record, partition) => {
          await handle({ topic, partition, offset: record.offset, value: record.value, headers: record.headers });
        },
        { partitionsConcurrently: PARTITIONS_CONCURRENTLY },
      );
    },
    stop: async () => {
      await consumer?.disconnect();
      await retention.stop();
    },
  };
}
