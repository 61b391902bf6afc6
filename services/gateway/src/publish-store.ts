import type { Knex } from '@bus/db';
import type { ProducerPermissions, StoryState } from '@bus/som';
import { workspaceKey } from './batch-decisions';

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

/** A correlation id of a workspace: what the story lock of DESIGN §4 step 5 is taken on. */
export interface StoryKey {
  workspaceId: string;
  correlationId: string;
}

/** A correlation id's story state as the group commit stores it. */
export interface StoryStateUpdate extends StoryKey {
  state: StoryState;
  updatedAt: Date;
}

/** Reads and writes inside the transaction that holds the story locks of one group commit. */
export interface GroupTransaction {
  /** The stored content hash of each of `messages` that was accepted before, by workspaceKey(workspace, message_id). */
  accepted(messages: ReadonlyArray<{ workspaceId: string; messageId: string }>): Promise<Map<string, string>>;
  /** The stored story state of each of `stories` that has one, by workspaceKey(workspace, correlation_id). */
  storyStates(stories: readonly StoryKey[]): Promise<Map<string, unknown>>;
  record(messages: readonly AcceptedMessage[], states: readonly StoryStateUpdate[]): Promise<void>;
}

export interface PublishStore {
  accepted(workspaceId: string, messageId: string): Promise<PriorAcceptance>;
  /** The stored story state (libs/som parses it), or null for a correlation id never seen. */
  storyState(workspaceId: string, correlationId: string): Promise<unknown>;
  /**
   * Runs `work` in one transaction that holds the lock of every (workspace, correlation id) of
   * `stories` until it commits: publishes of one correlation id go through one at a time, in
   * acceptance order. A lock not granted within `lockTimeoutMs` fails the transaction.
   */
  withStoryLocks<T>(stories: readonly StoryKey[], lockTimeoutMs: number, work: (tx: GroupTransaction) => Promise<T>): Promise<T>;
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

  withStoryLocks<T>(stories: readonly StoryKey[], lockTimeoutMs: number, work: (tx: GroupTransaction) => Promise<T>): Promise<T> {
    // Every gateway takes a batch's locks in one order (sorted), so two batches never wait for each other in a cycle.
    const lockKeys = [...new Set(stories.map((s) => workspaceKey(s.workspaceId, s.correlationId)))].sort();
    return this.db.transaction(async (trx) => {
      // Bounded below delivery's acceptance wait: a publish never holds its Kafka record back longer.
      await trx.raw(`select set_config('lock_timeout', ?, true)`, [`${Math.max(1, Math.floor(lockTimeoutMs))}ms`]);
      // One advisory lock per (workspace, correlation id), held to COMMIT: it covers a correlation id
      // seen for the first time, which has no story_state row to lock yet. unnest keeps the array's order.
      await trx.raw('select count(pg_advisory_xact_lock(hashtextextended(k, 0))) from unnest(?::text[]) as k', [lockKeys]);
      return work({
        accepted: async (messages) => {
          const rows = await trx('accepted_messages')
            .whereRaw('(workspace_id, message_id) in (select * from unnest(?::text[], ?::text[]))', [
              messages.map((m) => m.workspaceId),
              messages.map((m) => m.messageId),
            ])
            .select('workspace_id', 'message_id', 'content_hash');
          return new Map(rows.map((r) => [workspaceKey(r.workspace_id, r.message_id), r.content_hash]));
        },
        storyStates: async (keys) => {
          const rows = await trx('story_state')
            .whereRaw('(workspace_id, correlation_id) in (select * from unnest(?::text[], ?::text[]))', [
              keys.map((k) => k.workspaceId),
              keys.map((k) => k.correlationId),
            ])
            .select('workspace_id', 'correlation_id', 'state');
          return new Map(rows.map((r) => [workspaceKey(r.workspace_id, r.correlation_id), r.state]));
        },
        record: async (messages, states) => {
          if (messages.length > 0) {
            await trx('accepted_messages').insert(
              messages.map((m) => ({
                workspace_id: m.workspaceId,
                message_id: m.messageId,
                content_hash: m.contentHash,
                message_type: m.messageType,
                correlation_id: m.correlationId,
                producer_connection_id: m.producerConnectionId,
                accepted_at: m.acceptedAt,
                kafka_partition: m.kafkaPartition,
                kafka_offset: m.kafkaOffset,
              })),
            );
          }
          if (states.length > 0) {
            await trx('story_state')
              .insert(
                states.map((u) => ({ workspace_id: u.workspaceId, correlation_id: u.correlationId, state: JSON.stringify(u.state), updated_at: u.updatedAt })),
              )
              .onConflict(['workspace_id', 'correlation_id'])
              .merge(['state', 'updated_at']);
          }
        },
      });
    });
  }

  async permissions(appId: string): Promise<ProducerPermissions> {
    const rows = await this.db('permissions').where({ app_id: appId }).select('kind', 'value');
    return {
      systemIds: rows.filter((r) => r.kind === 'system_id').map((r) => r.value),
      messageTypes: rows.filter((r) => r.kind === 'message_type').map((r) => r.value),
    };
  }
}

async function acceptedIn(db: Knex, workspaceId: string, messageId: string): Promise<PriorAcceptance> {
  const row = await db('accepted_messages').where({ workspace_id: workspaceId, message_id: messageId }).first('content_hash');
  return row ? { contentHash: row.content_hash } : null;
}

async function storyStateIn(db: Knex, workspaceId: string, correlationId: string): Promise<unknown> {
  const row = await db('story_state').where({ workspace_id: workspaceId, correlation_id: correlationId }).first('state');
  return row ? row.state : null;
}
