import type { Knex } from 'knex';

/**
 * The layout of every table the migrations create, in one place: the column list below is what a
 * migrated database has (tables.int.test.ts compares it with information_schema), and the row types
 * knex gives query results are derived from it (the `Tables` augmentation at the end). A migration that
 * renames or retypes a column therefore fails that test until this list follows it, and then `tsc`
 * wherever code used the old name or type.
 *
 * Column types are Postgres' udt names; a trailing `?` marks a nullable column. The TypeScript type of
 * each is what node-postgres returns without custom type parsers: int8 (bigint, bigserial) as a
 * string, float8 as a number, timestamptz as a Date, jsonb parsed (unknown: its shape is the
 * writer's), bytea as a Buffer, text[] (udt `_text`) as an array of strings.
 */

/** The enum types of the migrations and their values, in declaration order. */
export const ENUM_TYPES = {
  quota_tier: ['minimal', 'standard', 'high', 'custom'],
  organisation_kind: ['house', 'vendor', 'operator'],
  connection_kind: ['producer', 'consumer'],
  connection_status: ['active', 'revoked', 'removed'],
  permission_kind: ['system_id', 'message_type'],
  delivery_state: ['queued', 'leased', 'acked'],
  replay_status: ['running', 'succeeded', 'failed'],
} as const;

type EnumTypeName = keyof typeof ENUM_TYPES;
type ColumnTypeName = 'text' | '_text' | 'bool' | 'int4' | 'int8' | 'float8' | 'timestamptz' | 'jsonb' | 'bytea' | EnumTypeName;
type ColumnSpec = ColumnTypeName | `${ColumnTypeName}?`;

const QUOTA_COLUMNS = { quota_tier: 'quota_tier', custom_per_second: 'int4?', custom_burst: 'int4?', custom_per_day: 'int8?' } as const;

/** Every table of a fully migrated database with its columns. */
export const TABLE_COLUMNS = {
  // 001_tenancy
  organisations: { id: 'text', name: 'text', kind: 'organisation_kind', ...QUOTA_COLUMNS, created_at: 'timestamptz' },
  workspaces: { id: 'text', organisation_id: 'text', name: 'text', ...QUOTA_COLUMNS, created_at: 'timestamptz' },
  apps: { id: 'text', workspace_id: 'text', organisation_id: 'text', name: 'text', created_at: 'timestamptz' },
  connections: {
    id: 'text',
    app_id: 'text',
    workspace_id: 'text',
    kind: 'connection_kind',
    status: 'connection_status',
    credential_version: 'int4',
    created_at: 'timestamptz',
    status_changed_at: 'timestamptz?',
    // 024_connection_names
    name: 'text',
    description: 'text',
    last_used_at: 'timestamptz?',
  },
  credentials: { connection_id: 'text', version: 'int4', secret_hash: 'text', created_at: 'timestamptz', usable_until: 'timestamptz?' },
  permissions: { app_id: 'text', kind: 'permission_kind', value: 'text', created_at: 'timestamptz' },
  // 002_signing_keys
  signing_keys: {
    kid: 'text',
    public_jwk: 'jsonb',
    private_key_sealed: 'text',
    created_at: 'timestamptz',
    activates_at: 'timestamptz',
    retires_at: 'timestamptz?',
    unpublish_at: 'timestamptz?',
  },
  // 003_publish
  accepted_messages: {
    workspace_id: 'text',
    message_id: 'text',
    content_hash: 'text',
    message_type: 'text',
    correlation_id: 'text',
    producer_connection_id: 'text',
    accepted_at: 'timestamptz',
    kafka_partition: 'int4',
    kafka_offset: 'int8',
    // 016_accepted_body_digest
    body_sha256: 'bytea?',
  },
  story_state: { workspace_id: 'text', correlation_id: 'text', state: 'jsonb', updated_at: 'timestamptz' },
  // 004_delivery, 006_message_traceparent, 009_tester_tools
  messages: {
    workspace_id: 'text',
    message_id: 'text',
    body: 'bytea',
    message_type: 'text',
    correlation_id: 'text',
    published_at: 'timestamptz',
    kafka_partition: 'int4',
    kafka_offset: 'int8',
    stored_at: 'timestamptz',
    traceparent: 'text?',
  },
  deliveries: {
    id: 'int8',
    consumer_id: 'text',
    workspace_id: 'text',
    message_id: 'text',
    correlation_id: 'text',
    state: 'delivery_state',
    visible_at: 'timestamptz',
    lease_generation: 'int4',
    receive_count: 'int4',
    enqueued_at: 'timestamptz',
    acked_at: 'timestamptz?',
    nack_count: 'int4',
    last_nacked_at: 'timestamptz?',
    is_head: 'bool',
    // 022_test_runs
    first_received_at: 'timestamptz?',
    // 026_delivery_purged_at
    purged_at: 'timestamptz?',
    // 031_dead_letters_out_of_heads
    dead_lettered: 'bool',
  },
  quarantined_records: {
    id: 'int8',
    topic: 'text',
    kafka_partition: 'int4',
    kafka_offset: 'int8',
    workspace_id: 'text?',
    message_id: 'text?',
    reason: 'text',
    headers: 'jsonb',
    value: 'bytea?',
    quarantined_at: 'timestamptz',
  },
  // 005_admin
  skill_registrations: {
    id: 'text',
    seq: 'int8',
    consumer_id: 'text',
    instance_label: 'text',
    library_version: 'text',
    instance: 'jsonb',
    registered_at: 'timestamptz',
  },
  replay_jobs: {
    id: 'text',
    consumer_id: 'text',
    since: 'timestamptz',
    status: 'replay_status',
    scanned: 'int4',
    replayed: 'int4',
    skipped: 'int4',
    error: 'text?',
    requested_at: 'timestamptz',
    heartbeat_at: 'timestamptz',
    finished_at: 'timestamptz?',
  },
  // 009_tester_tools
  refusals: {
    id: 'int8',
    workspace_id: 'text',
    connection_id: 'text',
    mode: 'text',
    message_id: 'text?',
    message_type: 'text?',
    correlation_id: 'text?',
    status: 'int4',
    violations: 'jsonb',
    refused_at: 'timestamptz',
    // 019_refusal_violations_omitted
    violations_omitted: 'int4',
  },
  refusal_counters: { connection_id: 'text', rate_limited: 'int8', quota_exceeded: 'int8', last_refused_at: 'timestamptz' },
  // 010_aws_principals
  aws_principals: {
    access_key_id: 'text',
    connection_id: 'text',
    role_arn: 'text',
    secret_sealed: 'text',
    status: 'text',
    challenge_hash: 'text?',
    challenge_expires_at: 'timestamptz?',
    created_at: 'timestamptz',
    verified_at: 'timestamptz?',
    revoked_at: 'timestamptz?',
  },
  // 011_identity_providers
  identity_providers: {
    id: 'text',
    issuer: 'text',
    jwks_url: 'text',
    audiences: '_text',
    algorithms: '_text',
    client_claim: 'text',
    clock_tolerance_seconds: 'int4',
    created_at: 'timestamptz',
  },
  identity_bindings: { id: 'text', provider_id: 'text', client_value: 'text', connection_id: 'text', created_at: 'timestamptz' },
  // 012_consumer_tools
  consumer_tools: {
    consumer_id: 'text',
    duplicate_rate: 'float8',
    delay_ms: 'int4',
    early_expiry_rate: 'float8',
    max_receives: 'int4?',
    updated_at: 'timestamptz',
  },
  consumer_fault_events: {
    id: 'int8',
    consumer_id: 'text',
    delivery_id: 'int8',
    message_id: 'text',
    kind: 'text',
    detail_ms: 'int4?',
    injected_at: 'timestamptz',
  },
  dead_letters: {
    id: 'int8',
    consumer_id: 'text',
    delivery_id: 'int8',
    message_id: 'text',
    correlation_id: 'text',
    receive_count: 'int4',
    dead_lettered_at: 'timestamptz',
    resolved_at: 'timestamptz?',
    resolution: 'text?',
  },
  // 013_portal_people
  portal_logins: { state_hash: 'text', code_verifier: 'text', nonce: 'text', created_at: 'timestamptz' },
  portal_sessions: {
    id_hash: 'text',
    subject: 'text',
    name: 'text',
    grants: 'jsonb',
    csrf_token: 'text',
    created_at: 'timestamptz',
    last_seen_at: 'timestamptz',
    expires_at: 'timestamptz',
  },
  audit_log: {
    id: 'int8',
    at: 'timestamptz',
    actor_kind: 'text',
    actor: 'text',
    action: 'text',
    target: 'text',
    organisation_id: 'text?',
    source_address: 'text',
    request_id: 'text?',
    status: 'int4',
  },
  // 022_test_runs
  test_runs: {
    id: 'text',
    workspace_id: 'text',
    label: 'text',
    opened_by: 'text',
    started_at: 'timestamptz',
    ends_at: 'timestamptz',
    stopped_at: 'timestamptz?',
    // 023_run_validations
    validations_omitted: 'int4',
  },
  // 023_run_validations
  run_validations: {
    id: 'int8',
    run_id: 'text',
    connection_id: 'text',
    message_id: 'text?',
    message_type: 'text?',
    correlation_id: 'text?',
    validated_at: 'timestamptz',
  },
  // 025_activity_minutes
  activity_minutes: {
    connection_id: 'text',
    minute: 'timestamptz',
    workspace_id: 'text',
    published: 'int8',
    refused: 'jsonb',
    delivered: 'int8',
    acked: 'int8',
    queue_depth: 'int8?',
    oldest_age_seconds: 'float8?',
  },
} as const satisfies Record<string, Record<string, ColumnSpec>>;

export type TableName = keyof typeof TABLE_COLUMNS;

type ValueOf<T extends ColumnTypeName> = T extends 'text'
  ? string
  : T extends '_text'
    ? string[]
    : T extends 'bool'
      ? boolean
      : T extends 'int4' | 'float8'
        ? number
        : T extends 'int8'
          ? string
          : T extends 'timestamptz'
            ? Date
            : T extends 'jsonb'
              ? unknown
              : T extends 'bytea'
                ? Buffer
                : T extends EnumTypeName
                  ? (typeof ENUM_TYPES)[T][number]
                  : never;

/** What a column may be given: an int8 also as a number (Postgres converts it; it reads back as a string). */
type WrittenOf<T extends ColumnTypeName> = T extends 'int8' ? string | number : ValueOf<T>;

/**
 * Columns whose values are narrower than their Postgres type says: a jsonb column as its writer
 * stores it (Postgres checks only that it is JSON; written as JSON text, read back parsed), a text
 * column (or a text[] column's elements) a CHECK holds to a few values. Any other jsonb column reads
 * as unknown.
 */
interface NarrowedColumns {
  story_state: { state: Record<string, unknown> };
  quarantined_records: { headers: Record<string, string> };
  skill_registrations: { instance: Record<string, unknown> };
  refusals: { mode: 'publish' | 'validate'; violations: Array<{ source: string; rule: string; message: string; path?: string }> };
  aws_principals: { status: 'pending' | 'verified' | 'revoked' };
  // The migration's CHECKs: asymmetric algorithms only (libs/tokens EXTERNAL_ALGORITHMS), one of three client claims.
  identity_providers: {
    algorithms: Array<'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA'>;
    client_claim: 'azp' | 'client_id' | 'sub';
  };
  // The portal's Grant (services/portal people/policy.ts); its people-store checks that both agree.
  portal_sessions: { grants: Array<{ role: 'operator' } | { role: 'house_admin' | 'vendor' | 'viewer'; organisationId: string }> };
  audit_log: { actor_kind: 'person' | 'operator_basic' };
  consumer_fault_events: { kind: 'duplicate' | 'delay' | 'early_expiry' };
  dead_letters: { resolution: 'redriven' | 'discarded' | null };
}

type ColumnValue<T, C, S> = T extends keyof NarrowedColumns ? (C extends keyof NarrowedColumns[T] ? NarrowedColumns[T][C] : SpecValue<S>) : SpecValue<S>;

type SpecValue<S> = S extends 'jsonb'
  ? unknown
  : S extends `${infer B extends ColumnTypeName}?`
    ? ValueOf<B> | null
    : S extends ColumnTypeName
      ? ValueOf<S>
      : never;
type ColumnWritten<S> = S extends `${infer T extends ColumnTypeName}?` ? WrittenOf<T> | null : S extends ColumnTypeName ? WrittenOf<S> : never;

/** One row of `table` as a query reads it. */
export type Row<T extends TableName> = { -readonly [C in keyof (typeof TABLE_COLUMNS)[T]]: ColumnValue<T, C, (typeof TABLE_COLUMNS)[T][C]> };

/**
 * The columns an insert or update of `table` may set (the database fills the defaults of the rest),
 * each a value or a SQL expression (`db.fn.now()`: the database's clock, not this process's).
 */
export type Written<T extends TableName> = { -readonly [C in keyof (typeof TABLE_COLUMNS)[T]]?: ColumnWritten<(typeof TABLE_COLUMNS)[T][C]> | Knex.Raw };

/** A value of one of the migrations' enum types. */
export type EnumValue<E extends EnumTypeName> = (typeof ENUM_TYPES)[E][number];

type AllRows = { [T in TableName]: Knex.CompositeTableType<Row<T>, Written<T>, Written<T>> };

declare module 'knex/types/tables' {
  // Knex types `db('table')` queries by this interface: selects yield the row type, and where, insert
  // and update accept only its columns.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Tables extends AllRows {}
}
