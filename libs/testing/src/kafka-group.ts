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
      const firstRead = restartOffsets(ends, committed?.partitions ?? []);
      return ends.filter((end) => BigInt(firstRead.get(end.partition)!) < BigInt(end.high)).map((end) => end.partition);
    },
    (behind) => behind.length === 0,
    { timeoutMs, intervalMs: 250, what: `consumer group ${groupId} caught up with ${topic}` },
  );
}

/**
 * Where a restart of the group starts reading each partition: its committed offset or, with none
 * ("-1"), the partition's first record (`low`) — its end when no record ever landed there, so a
 * partition holding no records (random keys can leave one empty) has nothing to replay.
 */
export function restartOffsets(
  ends: ReadonlyArray<{ partition: number; low: string }>,
  committed: ReadonlyArray<{ partition: number; offset: string }>,
): Map<number, string> {
  return new Map(
    ends.map(({ partition, low }) => {
      const offset = committed.find((c) => c.partition === partition)?.offset ?? '-1';
      return [partition, offset === '-1' ? low : offset];
    }),
  );
}
