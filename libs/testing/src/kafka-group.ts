/** The two admin calls the wait needs (kafkajs's Admin has them); typed here so this lib needs no Kafka client. */
export interface GroupOffsetsAdmin {
  fetchTopicOffsets(topic: string): Promise<Array<{ partition: number; high: string }>>;
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
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const behind = ends.filter((end) => {
      const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      return BigInt(offset) < BigInt(end.high);
    });
    if (behind.length === 0) return;
    if (Date.now() > deadline) throw new Error(`consumer group ${groupId} still behind on partitions ${behind.map((b) => b.partition).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
