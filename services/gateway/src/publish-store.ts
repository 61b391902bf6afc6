import type { Knex } from '@bus/db';
import type { ProducerPermissions, StoryState } from '@bus/som';

export interface AcceptedMessage {
  workspaceId: string;
  messageId: string;
  contentHash: string;
  messageType: string;
  correlationId: string;
  producerConnectionId: string;
  acceptedAt: Date;
  kafkaPartition: number;
  kafkaOffset: string;
}

/** What the bus accepted before under a message_id, if anything. */
export type PriorAcceptance = { contentHash: string } | null;

/** Reads and writes inside the transaction that holds one correlation id's lock. */
export interface StoryTransaction {
  accepted(messageId: string): Promise<PriorAcceptance>;
  storyState(): Promise<unknown>;
  record(message: AcceptedMessage, nextState: StoryState | null): Promise<void>;
}

export interface PublishStore {
  accepted(workspaceId: string, messageId: string): Promise<PriorAcceptance>;
  /** The stored story state (libs/som parses it), or null for a correlation id never seen. */
  storyState(workspaceId: string, correlationId: string): Promise<unknown>;
  /**
   * Runs `work` in one transaction that holds the lock of (workspace, correlation id) until it
   * commits: publishes of one correlation id go through one at a time, in acceptance order.
   */
  withStoryLock<T>(workspaceId: string, correlationId: string, work: (tx: StoryTransaction) => Promise<T>): Promise<T>;
  permissions(appId: string): Promise<ProducerPermissions>;
}

export class KnexPublishStore implements PublishStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexPublishStore {
    return new KnexPublishStore(db);
  }

  accepted(workspaceId: string, messageId: string): Promise<PriorAcceptance> {
    return acceptedIn(this.db, workspaceId, messageId);
  }

  storyState(workspaceId: string, correlationId: string): Promise<unknown> {
    return storyStateIn(this.db, workspaceId, correlationId);
  }

  withStoryLock<T>(workspaceId: string, correlationId: string, work: (tx: StoryTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (trx) => {
      // One advisory lock per (workspace, correlation id), held to COMMIT: it covers a correlation id
      // seen for the first time, which has no story_state row to lock yet.
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`${workspaceId}/${correlationId}`]);
      return work({
        accepted: (messageId) => acceptedIn(trx, workspaceId, messageId),
        storyState: () => storyStateIn(trx, workspaceId, correlationId),
        record: async (message, nextState) => {
          await trx('accepted_messages').insert({
            workspace_id: message.workspaceId,
            message_id: message.messageId,
            content_hash: message.contentHash,
            message_type: message.messageType,
            correlation_id: message.correlationId,
            producer_connection_id: message.producerConnectionId,
            accepted_at: message.acceptedAt,
            kafka_partition: message.kafkaPartition,
            kafka_offset: message.kafkaOffset,
          });
          if (nextState) {
            await trx('story_state')
              .insert({ workspace_id: workspaceId, correlation_id: correlationId, state: JSON.stringify(nextState), updated_at: message.acceptedAt })
              .onConflict(['workspace_id', 'correlation_id'])
              .merge(['state', 'updated_at']);
          }
        },
      });
    });
  }

  async permissions(appId: string): Promise<ProducerPermissions> {
    const rows = (await this.db('permissions').where({ app_id: appId }).select('kind', 'value')) as Array<{ kind: string; value: string }>;
    return {
      systemIds: rows.filter((r) => r.kind === 'system_id').map((r) => r.value),
      messageTypes: rows.filter((r) => r.kind === 'message_type').map((r) => r.value),
    };
  }
}

async function acceptedIn(db: Knex, workspaceId: string, messageId: string): Promise<PriorAcceptance> {
  const row = (await db('accepted_messages').where({ workspace_id: workspaceId, message_id: messageId }).first('content_hash')) as
    | { content_hash: string }
    | undefined;
  return row ? { contentHash: row.content_hash } : null;
}

async function storyStateIn(db: Knex, workspaceId: string, correlationId: string): Promise<unknown> {
  const row = (await db('story_state').where({ workspace_id: workspaceId, correlation_id: correlationId }).first('state')) as
    | { state: unknown }
    | undefined;
  return row ? row.state : null;
}
