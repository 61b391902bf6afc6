import { Gauge, type Registry } from 'prom-client';
import type { Admin, Kafka } from '@bus/kafka';
import { METRICS, type Logger } from '@bus/observability';

/**
 * Two admin requests (the topic's high-water marks, the group's committed offsets) at most this often,
 * however often and by however many Prometheus servers the process is scraped.
 */
const LAG_READ_EVERY_MS = 5_000;
/** A scrape does not wait longer than this on Kafka; it then shows no lag series. */
const LAG_READ_TIMEOUT_MS = 2_000;

export interface KafkaLag {
  stop(): Promise<void>;
}

/**
 * `bus_kafka_consumer_lag{group,topic,partition}`: high-water mark − committed offset of delivery's
 * consumer group on the messages topic, one series per partition (bounded by the topic's partition
 * count). A partition the group never committed counts every record the topic still holds on it.
 * Only delivery's own group is read, so the control-topic readers' per-process groups never show.
 */
export function registerKafkaLag(deps: { kafka: Kafka; groupId: string; topic: string; metrics: Registry; logger: Logger }): KafkaLag {
  let admin: Admin | undefined;
  let connected: Promise<void> | undefined;
  const read = async (): Promise<Array<{ partition: number; lag: number }>> => {
    admin ??= deps.kafka.admin();
    const a = admin;
    connected ??= a.connect().catch((err: unknown) => {
      connected = undefined;
      throw err;
    });
    await connected;
    const [ends, committed] = await Promise.all([a.fetchTopicOffsets(deps.topic), a.fetchOffsets({ groupId: deps.groupId, topics: [deps.topic] })]);
    const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    return ends.map((end) => {
      const high = Number(end.high);
      const at = done.get(end.partition) ?? -1;
      return { partition: end.partition, lag: Math.max(0, high - (at >= 0 ? at : Number(end.low))) };
    });
  };
  let cached: { at: number; lags: Promise<Array<{ partition: number; lag: number }>> } | undefined;
  new Gauge({
    ...METRICS.kafkaConsumerLag,
    help: "Records of the messages topic not yet committed by delivery's consumer group, per partition (high-water mark - committed offset)",
    registers: [deps.metrics],
    async collect() {
      this.reset();
      if (!cached || Date.now() - cached.at > LAG_READ_EVERY_MS) cached = { at: Date.now(), lags: read() };
      const lags = cached.lags;
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('Kafka did not answer in time')), LAG_READ_TIMEOUT_MS)));
        for (const { partition, lag } of await Promise.race([lags, timeout])) {
          this.set({ group: deps.groupId, topic: deps.topic, partition: String(partition) }, lag);
        }
      } catch (err) {
        // Read again at the next scrape rather than serving the failure for the cache's life.
        if (cached?.lags === lags) cached = undefined;
        deps.logger.warn({ err }, 'Kafka consumer lag could not be read');
      } finally {
        clearTimeout(timer);
      }
    },
  });
  return {
    stop: async () => {
      const a = admin;
      admin = undefined;
      if (a && connected) await a.disconnect().catch(() => undefined);
    },
  };
}
