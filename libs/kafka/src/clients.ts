import {
  ConfigResourceTypes,
  Kafka,
  logLevel,
  Partitioners,
  type Admin,
  type ICustomPartitioner,
  type Message,
  type Consumer,
  type EachBatchPayload,
  type KafkaConfig,
  type LogEntry,
  type Producer,
  type ProducerConfig,
  type RetryOptions,
} from 'kafkajs';
import type { Logger } from 'pino';
// Stops kafkajs' request queues from polling while idle; see the module.
import './request-queue';
import { PacedCommits, type PartitionPosition } from './paced-commits';
import { runRestartingAfterCrashes, type ConsumerRun, type RestartOptions } from './restarts';

export interface KafkaOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

function clientConfig(opts: KafkaOptions): KafkaConfig {
  return {
    clientId: opts.clientId,
    brokers: opts.brokers,
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => logKafkaEntry(opts.logger, entry),
  };
}

export function createKafka(opts: KafkaOptions): Kafka {
  return new Kafka({ ...clientConfig(opts), retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 5_000 } });
}

/**
 * kafkajs logs every error response at error level, also the ones it retries by design. A broker that
 * just started answers GroupCoordinator requests with this until its offsets topic is ready (seconds on
 * a fresh local stack), and kafkajs retries them: a debug line, not an error on a healthy start. A
 * coordinator that never comes fails the retries, which is still logged at error level.
 */
const RETRIED_RESPONSE_ERRORS: ReadonlySet<string> = new Set(['The group coordinator is not available']);

function logKafkaEntry(logger: Logger, { level, log }: LogEntry): void {
  const { message, timestamp: _ts, ...fields } = log;
  const line = { kafka: { namespace: fields.namespace ?? undefined, ...fields } };
  const retried = typeof fields.error === 'string' && RETRIED_RESPONSE_ERRORS.has(fields.error) && message.startsWith('Response ');
  if (retried) logger.debug(line, message);
  else if (level === logLevel.ERROR || level === logLevel.NOTHING) logger.error(line, message);
  else if (level === logLevel.WARN) logger.warn(line, message);
  else logger.debug(line, message);
}

/**
 * The producer the bus uses: acks=all on every send (set per send by `sendAcked`), and NOT kafkajs'
 * idempotent mode, which has lost messages under concurrent sends (kafkajs issue 1005). Per
 * correlation-id order is kept by the gateway holding the story-state lock across the send;
 * duplicates from retries are absorbed by message_id dedup in delivery.
 */
export function createProducer(kafka: Kafka): Producer {
  return kafka.producer(PRODUCER_CONFIG);
}

/**
 * The partition kafkajs chose for each message object of a send (sendAckedBatch reads it to give each
 * record its own offset: a produce answer has one base offset per partition, not one per record).
 */
const chosenPartitions = new WeakMap<object, number>();

/**
 * kafkajs 2's default partitioner (murmur2, the Java client's), named so kafkajs does not warn at every
 * start that its default changed in 2.0 (this project never used the legacy one), noting its choice.
 */
const recordingPartitioner: ICustomPartitioner = () => {
  const choose = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = choose(args);
    chosenPartitions.set(args.message, partition);
    return partition;
  };
};

const PRODUCER_CONFIG: ProducerConfig = { idempotent: false, allowAutoTopicCreation: false, createPartitioner: recordingPartitioner };

/** kafkajs's backoff (src/retry): each wait is the previous one times 2 with ±20 % jitter, capped. */
const BACKOFF = { initialRetryTime: 100, multiplier: 2, factor: 0.2 } as const;

/** The client and producer settings of `createBoundedProducer` for a send that must answer within `deadlineMs`. */
export interface BoundedSendSettings {
  connectionTimeout: number;
  requestTimeout: number;
  /** The client's own retries (connecting, metadata): none, each attempt of the send fails at once. */
  clientRetry: RetryOptions;
  /** The send's retries: as many as fit in the deadline against a broker that refuses connections. */
  producerRetry: RetryOptions;
  /** The longest the send takes against a broker that refuses connections (or is unreachable): every attempt's connection timeout plus the longest backoffs. */
  worstCaseUnreachableMs: number;
}

export function boundedSendSettings(deadlineMs: number): BoundedSendSettings {
  const connectionTimeout = Math.min(1_000, Math.max(100, Math.floor(deadlineMs / 10)));
  const maxRetryTime = Math.min(1_000, Math.max(BACKOFF.initialRetryTime, Math.floor(deadlineMs / 5)));
  // The longest waits kafkajs can draw: jitter at its top every time.
  const longestWait = (retry: number): number => {
    let wait = Math.ceil(BACKOFF.initialRetryTime * (1 + BACKOFF.factor));
    for (let i = 0; i < retry; i++) wait = Math.min(Math.ceil(wait * (1 + BACKOFF.factor)) * BACKOFF.multiplier, maxRetryTime);
    return wait;
  };
  const worstCase = (retries: number): number => {
    let total = (retries + 1) * connectionTimeout;
    for (let i = 0; i < retries; i++) total += longestWait(i);
    return total;
  };
  let retries = 0;
  while (worstCase(retries + 1) <= deadlineMs) retries++;
  return {
    connectionTimeout,
    // A broker that accepted the request but never answers is given up at the deadline.
    requestTimeout: deadlineMs,
    clientRetry: { retries: 0 },
    producerRetry: { retries, initialRetryTime: BACKOFF.initialRetryTime, maxRetryTime, multiplier: BACKOFF.multiplier, factor: BACKOFF.factor },
    worstCaseUnreachableMs: worstCase(retries),
  };
}

/**
 * A producer (as createProducer's) on a client of its own whose timeouts and retries are sized to
 * `deadlineMs`: the gateway answers a publish within its commit timeout, and a send it gave up should
 * give up too instead of retrying for half a minute (kafkajs's defaults retry a refused connection
 * for ~30 s, and its requests wait 30 s). Against a broker that is down the send fails within the
 * deadline (worstCaseUnreachableMs); a request a hung broker never answers is cut at the deadline.
 */
export function createBoundedProducer(opts: KafkaOptions, deadlineMs: number): Producer {
  const settings = boundedSendSettings(deadlineMs);
  const kafka = new Kafka({
    ...clientConfig(opts),
    connectionTimeout: settings.connectionTimeout,
    requestTimeout: settings.requestTimeout,
    retry: settings.clientRetry,
  });
  return kafka.producer({ ...PRODUCER_CONFIG, retry: settings.producerRetry });
}

export interface ProducedRecord {
  topic: string;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
  timestamp?: string;
}

/**
 * Sends one record with acks=all and resolves with its partition and offset once all replicas have it.
 * `ackTimeoutMs`: how long the brokers may wait for the in-sync replicas (kafkajs's default is 30 s).
 */
export async function sendAcked(
  producer: Producer,
  record: ProducedRecord,
  opts: { ackTimeoutMs?: number } = {},
): Promise<{ partition: number; offset: string }> {
  const [meta] = await producer.send({
    topic: record.topic,
    acks: -1,
    ...(opts.ackTimeoutMs !== undefined ? { timeout: opts.ackTimeoutMs } : {}),
    messages: [{ key: record.key, value: record.value, headers: record.headers, ...(record.timestamp ? { timestamp: record.timestamp } : {}) }],
  });
  if (!meta || meta.baseOffset === undefined) throw new Error(`no acknowledgement for ${record.topic}`);
  return { partition: meta.partition, offset: meta.baseOffset };
}

/**
 * Sends records to one topic in one produce request with acks=all and resolves, once all replicas
 * have them, with each record's partition and offset in the order given. Records of one partition
 * are appended in the order given, so their offsets are the partition's base offset plus their
 * position among them. The producer must be one of createProducer's or createBoundedProducer's.
 */
export async function sendAckedBatch(
  producer: Producer,
  topic: string,
  records: ReadonlyArray<Omit<ProducedRecord, 'topic'>>,
  opts: { ackTimeoutMs?: number } = {},
): Promise<Array<{ partition: number; offset: string }>> {
  if (records.length === 0) return [];
  const messages: Message[] = records.map((r) => ({ key: r.key, value: r.value, headers: r.headers, ...(r.timestamp ? { timestamp: r.timestamp } : {}) }));
  const answers = await producer.send({ topic, acks: -1, ...(opts.ackTimeoutMs !== undefined ? { timeout: opts.ackTimeoutMs } : {}), messages });
  const baseOffsets = new Map(answers.map((a) => [a.partition, a.baseOffset]));
  const nextInPartition = new Map<number, bigint>();
  return messages.map((message) => {
    const partition = chosenPartitions.get(message);
    const base = partition === undefined ? undefined : baseOffsets.get(partition);
    if (partition === undefined || base === undefined) throw new Error(`no acknowledgement for a record of ${topic}`);
    const offset = nextInPartition.get(partition) ?? BigInt(base);
    nextInPartition.set(partition, offset + 1n);
    return { partition, offset: offset.toString() };
  });
}

export interface BatchConsumerOptions {
  groupId: string;
  /**
   * How long the broker waits for a heartbeat before it gives the member's partitions to the others:
   * the stall after a member dies without leaving (SIGKILL, a lost node), and the upper bound on the
   * wait between heartbeats inside a batch handler. 30 s unless given.
   */
  sessionTimeoutMs?: number;
}

/**
 * Longest a fetch waits on an idle topic. A disconnect waits for the fetch in flight, so kafkajs's
 * default of 5 s made every stop of a process with an idle consumer (the control topic's, say) take
 * seconds; a record that arrives ends the wait at once whatever this is.
 */
const FETCH_WAIT_MS = 250;

export function createConsumer(kafka: Kafka, opts: BatchConsumerOptions): Consumer {
  return kafka.consumer({
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs ?? 30_000,
    // A sixth of the session (3 s at most): a member learns of a rebalance at its next heartbeat, so a
    // short session's failover is not held up by a long interval, and a few lost heartbeats are survived.
    heartbeatInterval: Math.min(3_000, Math.floor((opts.sessionTimeoutMs ?? 30_000) / 6)),
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: FETCH_WAIT_MS,
  });
}

/**
 * The broker's group.min.session.timeout.ms (the shortest session a member may ask for), or undefined
 * when the broker does not say (no DescribeConfigs permission, say): the caller then assumes Kafka's
 * default, and the cause is logged so an operator can tell a refusal from an outage.
 */
export async function groupMinSessionTimeoutMs(kafka: Kafka, logger: Logger): Promise<number | undefined> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const { brokers } = await admin.describeCluster();
    const broker = brokers[0];
    if (!broker) return undefined;
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: String(broker.nodeId), configNames: ['group.min.session.timeout.ms'] }],
    });
    const value = resources[0]?.configEntries.find((e) => e.configName === 'group.min.session.timeout.ms')?.configValue;
    return value ? Number(value) : undefined;
  } catch (err) {
    logger.warn({ err }, "the broker's group.min.session.timeout.ms could not be read; assuming Kafka's default");
    return undefined;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Whether a consumer is in its group and reading, for readiness: from the first fetch after each
 * GROUP_JOIN until a CRASH (kafkajs then restarts it, and the next join counts again). A join alone is
 * not enough: a group without committed offsets resolves "latest" at its first fetch, so a record
 * produced between the join and that fetch would be skipped by a consumer that said it was reading.
 * `onJoin` runs once per join, at that first fetch (at most FETCH_WAIT_MS after the join).
 */
export function trackGroupMembership(consumer: Consumer, onJoin: () => void = () => undefined): { joined(): boolean } {
  let joining = false;
  let reading = false;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joining = true;
    reading = false;
  });
  consumer.on(consumer.events.FETCH, () => {
    if (!joining) return;
    joining = false;
    reading = true;
    onJoin();
  });
  consumer.on(consumer.events.CRASH, () => {
    joining = false;
    reading = false;
  });
  return { joined: () => reading };
}

export type RecordHandler = (record: EachBatchPayload['batch']['messages'][number], partition: number) => Promise<void>;

export interface RunBatchesOptions extends RestartOptions {
  /** Partitions handled side by side, each still strictly in order; 1 when left out. */
  partitionsConcurrently?: number;
}

/** A partition's handled records are committed at least this often: a crash replays no more. */
const COMMIT_EVERY_RECORDS = 200;
const COMMIT_EVERY_MS = 1_000;

/**
 * Runs `handle` for every record, in order within each partition, via eachBatch: a heartbeat after
 * each record keeps a slow handler from triggering a rebalance (eachMessage would). An offset is
 * committed only after `handle` returned for its record, so a crash replays instead of skipping; it
 * is committed per 200 records or second and at the end of each batch, not per record (a commit is a
 * broker round trip that cost more than the record), so a crash replays at most that much — the
 * handlers are idempotent. A crash kafkajs does not recover from starts the consumer again
 * (runRestartingAfterCrashes): stop it with the returned run's `stop`.
 */
export async function runBatches(consumer: Consumer, handle: RecordHandler, opts: RunBatchesOptions = {}): Promise<ConsumerRun> {
  return runRestartingAfterCrashes(
    consumer,
    {
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: opts.partitionsConcurrently ?? 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
        let handled: string | undefined;
        let uncommitted = 0;
        let lastCommit = Date.now();
        const commit = async () => {
          if (handled === undefined) return;
          await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: nextOffset(handled) }] }] });
          handled = undefined;
          uncommitted = 0;
          lastCommit = Date.now();
        };
        try {
          for (const message of batch.messages) {
            if (!isRunning() || isStale()) break;
            await handle(message, batch.partition);
            resolveOffset(message.offset);
            handled = message.offset;
            if (++uncommitted >= COMMIT_EVERY_RECORDS || Date.now() - lastCommit >= COMMIT_EVERY_MS) await commit();
            await heartbeat();
          }
        } finally {
          // What was handled before a stop or a failing record is done; a partition taken away by a
          // rebalance is not ours to commit any more (its new owner replays from the last commit).
          if (!isStale()) await commit();
        }
      },
    },
    opts,
  );
}

export type BatchHandler = (records: Array<EachBatchPayload['batch']['messages'][number]>, partition: number, heartbeat: () => Promise<void>) => Promise<void>;

export interface RunRecordBatchesOptions extends RunBatchesOptions {
  /** Most records handed to one call of the handler; a longer Kafka batch is handed over in slices. */
  maxRecords?: number;
  /**
   * A partition's handled offsets are committed at most this often (PacedCommits); 0, the default,
   * commits after every slice.
   */
  commitIntervalMs?: number;
  /** Hears of a failed commit made by the interval's timer (a crash then replays more); ignored by default. */
  onLateCommitError?: (err: unknown, position: PartitionPosition) => void;
}

/**
 * Runs `handle` for each Kafka batch (one partition's records, in order, in slices of at most
 * `maxRecords`): a handler that does one round of work for many records instead of one per record.
 * A slice's offsets are committed only after `handle` returned for it, so a crash replays the slice
 * instead of skipping it — the handler must be idempotent — and with `commitIntervalMs` at most that
 * often per partition. `heartbeat` is for a handler that waits (kafkajs sends it at most once per
 * heartbeat interval); one is sent after each slice too. A partition taken away by a rebalance
 * meanwhile is not committed (its new owner replays from the last commit). A crash kafkajs does not
 * recover from starts the consumer again (runRestartingAfterCrashes). The returned run's `stop` first
 * commits every handled offset still waiting for its interval.
 */
export async function runRecordBatches(consumer: Consumer, handle: BatchHandler, opts: RunRecordBatchesOptions = {}): Promise<ConsumerRun> {
  const maxRecords = opts.maxRecords ?? COMMIT_EVERY_RECORDS;
  const commits = new PacedCommits(opts.commitIntervalMs ?? 0, (positions) => consumer.commitOffsets(positions), opts.onLateCommitError ?? (() => undefined));
  // Each of these makes the consumer read again from the last commit.
  consumer.on(consumer.events.REBALANCING, () => commits.drop());
  consumer.on(consumer.events.CRASH, () => commits.drop());
  consumer.on(consumer.events.GROUP_JOIN, () => commits.drop());
  consumer.on(consumer.events.COMMIT_OFFSETS, ({ payload }) => {
    for (const { topic, partitions } of payload.topics)
      for (const { partition, offset } of partitions) commits.committed({ topic, partition: Number(partition), offset });
  });
  const run = await runRestartingAfterCrashes(
    consumer,
    {
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: opts.partitionsConcurrently ?? 1,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
        const commitNow = async (positions: PartitionPosition[]) => {
          await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: positions.map(({ partition, offset }) => ({ partition, offset })) }] });
        };
        for (let from = 0; from < batch.messages.length; from += maxRecords) {
          if (!isRunning() || isStale()) break;
          const records = batch.messages.slice(from, from + maxRecords);
          const last = records[records.length - 1]?.offset;
          if (last === undefined) break;
          await handle(records, batch.partition, heartbeat);
          resolveOffset(last);
          if (isStale()) break;
          await commits.handled({ topic: batch.topic, partition: batch.partition, offset: nextOffset(last) }, commitNow);
          await heartbeat();
        }
      },
    },
    opts,
  );
  return {
    stop: async () => {
      // kafkajs' commitOffsets does nothing once its runner has stopped: the flush comes first.
      await commits.flush();
      await run.stop();
    },
  };
}

function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}

/**
 * Readiness of the brokers through an admin client. It connects on first use, so a process whose
 * Kafka is down at start-up still starts, answers /readyz with 503 and becomes ready when it is back.
 */
export function kafkaReadiness(admin: Admin) {
  return {
    name: 'kafka',
    check: async () => {
      await admin.connect();
      return admin.describeCluster();
    },
  };
}
