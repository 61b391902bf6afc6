import { simpleTransaction, sqlLiteral, sqlTextArray, type Knex } from '@bus/db';
import type { ProducerPermissions, StoryState } from '@bus/som';
import { workspaceKey } from './batch-decisions';

export interface AcceptedMessage {
  workspaceId: string;
  messageId: string;
  contentHash: string;
  /** SHA-256 of the accepted bytes (bodyDigest): delivery's check of a record without parsing it. */
  bodySha256: Buffer;
  messageType: string;
  correlationId: string;
  producerConnectionId: string;
  acceptedAt: Date;
  kafkaPartition: number;
  kafkaOffset: string;
}

/** What the bus accepted before under a message_id, if anything. */
export type PriorAcceptance = { contentHash: string } | null;

/** A correlation id of a workspace: what the story lock of docs/architecture.md#data-flow step 5 is taken on. */
export interface StoryKey {
  workspaceId: string;
  correlationId: string;
}

/** A correlation id's story state as the group commit stores it. */
export interface StoryStateUpdate extends StoryKey {
  state: StoryState;
  updatedAt: Date;
}

/** A message_id of a workspace: what idempotency is keyed on. */
export interface MessageKey {
  workspaceId: string;
  messageId: string;
}

/** What one group commit's transaction locks, and reads once its locks are granted. */
export interface StoryLockScope {
  /** Each (workspace, correlation id)'s lock is held until the transaction ends. */
  stories: readonly StoryKey[];
  /** The message_ids whose earlier acceptance is read under the locks (none: nothing is read). */
  messages?: readonly MessageKey[];
  /** A lock not granted within it fails the transaction (Postgres' lock_timeout). */
  lockTimeoutMs: number;
}

/** Inside the transaction that holds the story locks of one group commit. */
export interface GroupTransaction {
  /** The stored content hash of each message of the scope accepted before, by workspaceKey(workspace, message_id). */
  readonly accepted: ReadonlyMap<string, string>;
  /** The stored story state of each story of the scope that has one, by workspaceKey(workspace, correlation_id). */
  readonly storyStates: ReadonlyMap<string, unknown>;
  /**
   * The acceptances and the stories' next states to write: one statement, sent with the COMMIT once
   * `work` has returned (so nothing is written when it throws instead).
   */
  record(messages: readonly AcceptedMessage[], states: readonly StoryStateUpdate[]): void;
}

/** What a validate decides on: a message_id's earlier acceptance and its correlation id's story state, as of one moment. */
export interface DryRunView {
  prior: PriorAcceptance;
  /** The stored story state (libs/som parses it), or null for a correlation id never seen. */
  state: unknown;
}

export interface PublishStore {
  /**
   * Both read by one statement, so from one snapshot: a publish of the same message committing
   * meanwhile is seen whole (a duplicate) or not at all (a dry run) — never its story state
   * without its acceptance, which would refuse the message as out of sequence after itself.
   */
  dryRunView(workspaceId: string, messageId: string, correlationId: string): Promise<DryRunView>;
  /**
   * Runs `work` in one transaction that holds the lock of every (workspace, correlation id) of the
   * scope until it commits: publishes of one correlation id go through one at a time, in acceptance
   * order. What `work` gets was read after the locks were granted, so a racing publish of the same
   * message_id or correlation id has either committed or waits.
   */
  withStoryLocks<T>(scope: StoryLockScope, work: (tx: GroupTransaction) => T | Promise<T>): Promise<T>;
  permissions(appId: string): Promise<ProducerPermissions>;
}

export class KnexPublishStore implements PublishStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexPublishStore {
    return new KnexPublishStore(db);
  }

  async dryRunView(workspaceId: string, messageId: string, correlationId: string): Promise<DryRunView> {
    const { rows } = await this.db.raw<{ rows: Array<{ content_hash: string | null; state: unknown }> }>(
      `select (select content_hash from accepted_messages where workspace_id = ? and message_id = ?) as content_hash,
              (select state from story_state where workspace_id = ? and correlation_id = ?) as state`,
      [workspaceId, messageId, workspaceId, correlationId],
    );
    const row = rows[0];
    return { prior: row?.content_hash ? { contentHash: row.content_hash } : null, state: row?.state ?? null };
  }

  /**
   * Two round trips in all, whatever the batch's size (a profile showed Postgres round trips as the
   * group commit's main cost): BEGIN with lock_timeout, the locks and the reads under them; then the
   * writes with COMMIT.
   */
  withStoryLocks<T>(scope: StoryLockScope, work: (tx: GroupTransaction) => T | Promise<T>): Promise<T> {
    return simpleTransaction(this.db, async (tx) => {
      const [, , acceptedRows = [], storyRows = []] = await tx.run(lockAndReadStatements(scope));
      let writes: string | undefined;
      const result = await work({
        accepted: new Map(acceptedRows.map((r) => [workspaceKey(String(r.workspace_id), String(r.message_id)), String(r.content_hash)])),
        storyStates: new Map(storyRows.map((r) => [workspaceKey(String(r.workspace_id), String(r.correlation_id)), r.state])),
        record: (messages, states) => {
          writes = messages.length > 0 || states.length > 0 ? recordStatement(messages, states) : undefined;
        },
      });
      return { result, beforeCommit: writes === undefined ? [] : [writes] };
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

/**
 * The group commit's first statements, sent with BEGIN as one simple query: lock_timeout
 * (bounded below delivery's acceptance wait: a publish never holds its Kafka record back longer); one
 * advisory lock per (workspace, correlation id), held to COMMIT — it covers a correlation id seen for
 * the first time, which has no story_state row to lock yet — taken in one sorted order by every
 * gateway, so two batches never wait for each other in a cycle; then the reads, each its own statement
 * and so its own snapshot, taken after the locks were granted. A simple query carries no parameters,
 * so the values are quoted literals (libs/db sqlLiteral); the gateway only gets here with ids its
 * schema checked (letters, digits and . _ : -, or UUIDs). The reads join the keys' pairs (unnest): one
 * index probe per key whatever the table's statistics. `workspace_id = … and id = any(…)` was cheaper to
 * plan for one key but, on bench:publish's young tables at 64 in flight, read 133 buffers and 1.03 ms a
 * call against 57 and 0.20 for the join (docs/benchmarks.md, "Group commit").
 */
function lockAndReadStatements(scope: StoryLockScope): string[] {
  const lockKeys = [...new Set(scope.stories.map((s) => workspaceKey(s.workspaceId, s.correlationId)))].sort();
  const messages = scope.messages ?? [];
  const timeout = `${Math.max(1, Math.floor(scope.lockTimeoutMs))}ms`;
  return [
    `select set_config('lock_timeout', ${sqlLiteral(timeout)}, true)`,
    `select count(pg_advisory_xact_lock(hashtextextended(k, 0))) from unnest(${sqlTextArray(lockKeys)}) as k`,
    `select workspace_id, message_id, content_hash from accepted_messages where (workspace_id, message_id) in ` +
      `(select * from unnest(${sqlTextArray(messages.map((m) => m.workspaceId))}, ${sqlTextArray(messages.map((m) => m.messageId))}))`,
    `select workspace_id, correlation_id, state from story_state where (workspace_id, correlation_id) in ` +
      `(select * from unnest(${sqlTextArray(scope.stories.map((s) => s.workspaceId))}, ${sqlTextArray(scope.stories.map((s) => s.correlationId))}))`,
  ];
}

/**
 * A group commit's writes in one statement: the acceptances and the stories' next states as VALUES
 * lists of quoted literals (each coerced to its column's type by the insert). Postgres took 0.26 ms for
 * one publish's writes with COMMIT as VALUES against 0.36 ms from quoted JSON arrays through
 * jsonb_to_recordset, and the same at 25 rows.
 */
function recordStatement(messages: readonly AcceptedMessage[], states: readonly StoryStateUpdate[]): string {
  const acceptances = messages.map((m) =>
    [
      sqlLiteral(m.workspaceId),
      sqlLiteral(m.messageId),
      sqlLiteral(m.contentHash),
      sqlLiteral(`\\x${m.bodySha256.toString('hex')}`),
      sqlLiteral(m.messageType),
      sqlLiteral(m.correlationId),
      sqlLiteral(m.producerConnectionId),
      sqlLiteral(m.acceptedAt.toISOString()),
      String(m.kafkaPartition),
      sqlLiteral(m.kafkaOffset),
    ].join(', '),
  );
  const stories = states.map((u) =>
    [sqlLiteral(u.workspaceId), sqlLiteral(u.correlationId), sqlLiteral(JSON.stringify(u.state)), sqlLiteral(u.updatedAt.toISOString())].join(', '),
  );
  const inserts: string[] = [];
  if (acceptances.length > 0) {
    inserts.push(
      `acceptances as (insert into accepted_messages (workspace_id, message_id, content_hash, body_sha256, message_type, correlation_id, ` +
        `producer_connection_id, accepted_at, kafka_partition, kafka_offset) values (${acceptances.join('), (')}))`,
    );
  }
  if (stories.length > 0) {
    inserts.push(
      `states as (insert into story_state (workspace_id, correlation_id, state, updated_at) values (${stories.join('), (')}) ` +
        'on conflict (workspace_id, correlation_id) do update set state = excluded.state, updated_at = excluded.updated_at)',
    );
  }
  return `with ${inserts.join(',\n')}\nselect 1`;
}
