import type { Registry } from 'prom-client';
import { readConnectionWorkspaces, type Knex } from '@bus/db';
import type { ReadinessCheck, Service } from '@bus/http';
import {
  createConsumer,
  groupMinSessionTimeoutMs,
  MESSAGES_TOPIC,
  runRecordBatches,
  trackGroupMembership,
  type Consumer,
  type ConsumerRun,
  type Kafka,
} from '@bus/kafka';
import type { ActivityRecorder, Logger } from '@bus/observability';
import { KnexDeliveryStore, type RetentionSettings } from '@bus/queue';
import { deliverySessionTimeout, deliverySettings } from './config';
import { createBatchEnqueuer } from './enqueue';
import { createQuarantineRecheck } from './quarantine-recheck';
import { registerKafkaLag } from './kafka-lag';
import { registerQueueGauges } from './queue-gauges';
import { createRetentionSweeper } from './retention';

/**
 * Partitions one delivery process handles side by side. Order only matters within a partition (one
 * correlation id lives on one), and a record waiting for its acceptance (invariant A) then holds up
 * the later records of its own correlation id only. Each partition in flight uses one Postgres
 * connection at a time.
 */
const PARTITIONS_CONCURRENTLY = 4;
/**
 * Most records of one Kafka batch handled (one acceptance query, one transaction) and committed
 * together: a crash replays at most this many per partition, and one transaction stays small.
 */
const RECORDS_PER_BATCH = 200;
/**
 * A partition's handled offsets are committed at most this often (a broker round trip and a write of
 * __consumer_offsets each, once per lone publish before). A crash replays at most this much of a
 * partition; enqueueing is idempotent, so a replay costs time, not copies. A stop commits at once.
 */
const OFFSETS_COMMITTED_EVERY_MS = 1_000;
/** How often the queues' depth and oldest age are sampled for the activity charts (a minute keeps its last sample). */
const QUEUE_SAMPLE_MS = 15_000;

export interface DeliveryServiceDeps {
  /** Postgres (queues) and Kafka (bus.messages.v1) readiness. */
  readiness: ReadinessCheck[];
  db: Knex;
  kafka: Kafka;
  logger: Logger;
  metrics: Registry;
  /** The process's activity recorder (libs/composition): delivery counts deliveries and samples queues, the process starts and stops it. */
  activity: Pick<ActivityRecorder, 'delivered' | 'queueSample'>;
  /** Kafka consumer group; every delivery process of one environment shares it. */
  groupId: string;
  /** How long a record waits for its acceptance to commit before it is quarantined. */
  acceptanceWaitMs: number;
  /** How long an `acceptance.missing` quarantine is re-checked automatically (0: never); quarantine-recheck.ts. */
  quarantineRecheckMs: number;
  /** The retention windows and how the sweep runs (docs/operations.md, "Retention"). */
  retention: RetentionSettings;
  /** DELIVERY_SESSION_TIMEOUT; unset: deliverySessionTimeout's default for the broker. */
  sessionTimeoutMs?: number | undefined;
  /** The messages topic; tests use their own. */
  topic?: string;
}

/**
 * Delivery: consumes bus.messages.v1 into one queue per consumer connection (docs/architecture.md#data-flow), re-checks
 * `acceptance.missing` quarantines, and runs the retention sweep of every table the bus writes
 * (docs/operations.md). It has no routes of its own; its process serves /healthz, /readyz and
 * /metrics only. It works in Kafka batches (enqueue.ts), each partition with statements of its own
 * (they run side by side): offsets are committed only after the batch's Postgres transaction committed
 * (runRecordBatches), at most once a second per partition, so a crash replays records, and enqueueing
 * is idempotent on (consumer, message_id), so a replay makes no second copy.
 */
export function createDeliveryService(deps: DeliveryServiceDeps): Service {
  const store = KnexDeliveryStore.create(deps.db);
  const queues = registerQueueGauges({ store, workspacesOf: (ids) => readConnectionWorkspaces(deps.db, ids), metrics: deps.metrics, logger: deps.logger });
  const sampleQueues = async () => {
    try {
      for (const q of await queues.sample()) deps.activity.queueSample(q.consumerId, q.depth, q.oldestAgeSeconds);
    } catch (err) {
      deps.logger.warn({ err }, 'queue depths could not be sampled for the activity charts');
    }
  };
  let sampling: NodeJS.Timeout | undefined;
  const retention = createRetentionSweeper({ db: deps.db, metrics: deps.metrics, logger: deps.logger, settings: deps.retention });
  const recheck = createQuarantineRecheck({ store, metrics: deps.metrics, logger: deps.logger, quarantineRecheckMs: deps.quarantineRecheckMs });
  const handle = createBatchEnqueuer({
    store,
    logger: deps.logger,
    metrics: deps.metrics,
    acceptanceWaitMs: deps.acceptanceWaitMs,
    activity: deps.activity,
  });
  const topic = deps.topic ?? MESSAGES_TOPIC;
  const kafkaLag = registerKafkaLag({ kafka: deps.kafka, groupId: deps.groupId, topic, metrics: deps.metrics, logger: deps.logger });
  let consumer: Consumer | undefined;
  let batches: ConsumerRun | undefined;
  let membership: { joined(): boolean } | undefined;
  const groupJoined: ReadinessCheck = {
    name: 'delivery-consumer',
    check: async () => {
      if (!membership?.joined()) throw new Error('the delivery consumer has not joined its group yet');
    },
  };
  return {
    name: 'delivery',
    routers: [],
    readiness: [...deps.readiness, groupJoined],
    start: async () => {
      retention.start();
      recheck.start();
      void sampleQueues();
      sampling = setInterval(() => void sampleQueues(), QUEUE_SAMPLE_MS);
      sampling.unref();
      const sessionTimeoutMs = deliverySessionTimeout(deps.sessionTimeoutMs, await groupMinSessionTimeoutMs(deps.kafka, deps.logger));
      deps.logger.info({ session_timeout_ms: sessionTimeoutMs }, 'delivery consumer session');
      consumer = createConsumer(deps.kafka, { groupId: deps.groupId, sessionTimeoutMs });
      membership = trackGroupMembership(consumer);
      await consumer.connect();
      // A group without committed offsets reads the topic from its start (invariant B: a record
      // produced while a new group was still joining is not skipped). Records of workspaces this
      // database does not have are skipped at the cost of one cached lookup; enqueueing is idempotent.
      await consumer.subscribe({ topic, fromBeginning: true });
      batches = await runRecordBatches(
        consumer,
        async (records, partition, heartbeat) => {
          await handle(
            records.map((record) => ({ topic, partition, offset: record.offset, key: record.key, value: record.value, headers: record.headers })),
            heartbeat,
          );
        },
        {
          partitionsConcurrently: PARTITIONS_CONCURRENTLY,
          maxRecords: RECORDS_PER_BATCH,
          commitIntervalMs: OFFSETS_COMMITTED_EVERY_MS,
          onLateCommitError: (err, position) =>
            deps.logger.warn(
              { err, topic: position.topic, partition: position.partition, offset: position.offset },
              'delivery could not commit its Kafka offset; trying again in a second',
            ),
          logger: deps.logger,
        },
      );
    },
    stop: async () => {
      await (batches ? batches.stop() : consumer?.disconnect());
      clearInterval(sampling);
      await Promise.all([retention.stop(), recheck.stop(), kafkaLag.stop()]);
    },
  };
}

/** Delivery on a process's shared clients, as its own main and the all-in-one run it. */
export function deliveryServiceOf(
  clients: {
    db: Knex;
    kafka: Kafka;
    logger: Logger;
    metrics: Registry;
    activity: DeliveryServiceDeps['activity'];
    ready: { postgres: ReadinessCheck; kafka: ReadinessCheck };
  },
  config: Parameters<typeof deliverySettings>[0],
): Service {
  const { db, kafka, logger, metrics, activity, ready } = clients;
  return createDeliveryService({ readiness: [ready.postgres, ready.kafka], db, kafka, logger, metrics, activity, ...deliverySettings(config) });
}
