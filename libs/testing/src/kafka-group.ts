/** The two admin calls the wait needs (kafkajs's Admin has them); typed here so this lib needs no Kafka client. */
export interface GroupOffsetsAdmin {
  fetchTopicOffsets(topic: string): Promise<Array<{ partition: number; high: string; low: string }>>;
  fetchOffsets(opts: { groupId: string; topics: string[] }): Promise<Array<{ partitions: Array<{ partition: number; offset: string }> }>>;
}

/**
 * Resolves once consumer group `groupId` has committed every record `topic` held when it was called.
 * A new bus's delivery group reads the shared messages topic's whole history first (docs/delivery.md),
 * tens of thousands of other runs' records on a developer machine: a test or a benchmark that times
 * publish → receive waits for this first, so that history's length is not part of what it measures.
 */
export async function waitForGroupCaughtUp(admin: GroupOffsetsAdmin, groupId: string, topic: string, timeoutMs = 120_000): Promise<void> {
  const ends = await admin.fetchTopicOffsets(topic);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const committed = await committedOffsets(admin, groupId, topic);
    // A partition holding no records (a fresh topic) has nothing to commit, so it is never behind.
    const behind = ends.filter((end) => {
      const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      return BigInt(end.high) > BigInt(end.low) && BigInt(offset) < BigInt(end.high);
    });
    if (behind.length === 0) return;
    if (Date.now() > deadline) throw new Error(`consumer group ${groupId} still behind on partitions ${behind.map((b) => b.partition).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The group's committed offsets, or undefined while Kafka cannot say yet: on a broker that just
 * started, the group coordinator (the __consumer_offsets topic) is still being set up and answers with
 * retriable errors such as NOT_COORDINATOR.
 */
async function committedOffsets(admin: GroupOffsetsAdmin, groupId: string, topic: string) {
  try {
    return (await admin.fetchOffsets({ groupId, topics: [topic] }))[0];
  } catch (err) {
    if ((err as { retriable?: boolean }).retriable === true) return undefined;
    throw err;
  }
}
