import { ConfigResourceTypes, type Admin, type ITopicConfig } from 'kafkajs';

/** Accepted SOM messages. Key `<workspace_id>/<correlation_id>`, value the producer's exact bytes. */
export const MESSAGES_TOPIC = 'bus.messages.v1';
/** Connection, credential, permission and tier changes, so every service drops its caches at once. */
export const CONTROL_TOPIC = 'bus.control.v1';

export interface TopicSettings {
  messagesPartitions: number;
  replicationFactor: number;
  /** The replay archive: 30 days Sandbox, 7 days Preview. */
  messagesRetentionMs: number;
}

export function busTopics(s: TopicSettings): ITopicConfig[] {
  const minInsync = String(Math.min(2, s.replicationFactor));
  return [
    {
      topic: MESSAGES_TOPIC,
      numPartitions: s.messagesPartitions,
      replicationFactor: s.replicationFactor,
      configEntries: [
        { name: 'retention.ms', value: String(s.messagesRetentionMs) },
        { name: 'cleanup.policy', value: 'delete' },
        // acks=all only means something when more than one replica must have the record.
        { name: 'min.insync.replicas', value: minInsync },
        { name: 'max.message.bytes', value: String(1024 * 1024) },
      ],
    },
    {
      topic: CONTROL_TOPIC,
      numPartitions: 1,
      replicationFactor: s.replicationFactor,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'min.insync.replicas', value: minInsync },
      ],
    },
  ];
}

/**
 * Creates missing topics and brings the retention of existing ones to the configured value; never
 * deletes. Partition counts of an existing topic are left alone (raising them would move keys).
 */
export async function ensureTopics(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t.topic));
  if (missing.length > 0) await admin.createTopics({ topics: missing, waitForLeaders: true });
  const present = topics.filter((t) => existing.has(t.topic) && t.configEntries && t.configEntries.length > 0);
  if (present.length > 0) {
    await admin.alterConfigs({
      validateOnly: false,
      resources: present.map((t) => ({
        type: ConfigResourceTypes.TOPIC,
        name: t.topic,
        configEntries: t.configEntries ?? [],
      })),
    });
  }
}
