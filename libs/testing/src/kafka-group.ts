import { eventually } from './eventually';

/** The admin calls the wait needs (kafkajs's Admin has them); typed here so this lib needs no Kafka client. */
export interface GroupOffsetsAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  fetchTopicOffsets(topic: string): Promise<Array<{ partition: number; high: string; low: string }>>;
  fetchOffsets(opts: { groupId: string; topics: string[] }): Promise<Array<{ partitions: Array<{ partition: number; offset: string }> }>>;
}

/**
 * Resolves once consumer group `groupId` has committed every record `topic` held when it was called.
 * A new bus's delivery group reads the shared messages topic's whole history first (docs/delivery.md),
 * tens of thousands of other runs' records on a developer machine: a test or a benchmark that times
 * publish → receive waits for this first, so that history's length is not part of what it measures.
 * A group commits a record's offset only once it has handled it, so this also proves that every
 * record produced before the call has been processed (what a test needs before "nothing arrived").
 * It connects `admin` (a new one, e.g. kafka.admin()) and disconnects it when done.
 */
export async function waitForGroupCaughtUp(admin: GroupOffsetsAdmin, groupId: string, topic: string, timeoutMs = 120_000): Promise<void> {
  await admin.connect();
  try {
    await caughtUp(admin, groupId, topic, timeoutMs);
  } finally {
    await admin.disconnect();
  }
}

async function caughtUp(admin: GroupOffsetsAdmin, groupId: string, topic: string, timeoutMs: number): Promise<void> {
  const ends = await admin.fetchTopicOffsets(topic);
  await eventually(
    // On a broker that just started, the group coordinator (the __consumer_offsets topic) is still
    // being set up and fetchOffsets fails (NOT_COORDINATOR): eventually reads again, and a timeout
    // says the last error. The value read is the partitions still behind.
    async () => {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      // A partition holding no records (a fresh topic) has nothing to commit, so it is never behind.
      return ends
        .filter((end) => {
          const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
          return BigInt(end.high) > BigInt(end.low) && BigInt(offset) < BigInt(end.high);
        })
        .map((end) => end.partition);
    },
    (behind) => behind.length === 0,
    { timeoutMs, intervalMs: 250, what: `consumer group ${groupId} caught up with ${topic}` },
  );
}
