import {
  consumerToolsColumns,
  isUniqueViolation,
  consumerToolsOf,
  countHeldUnderLock,
  inOneSnapshot,
  keysetPage,
  readSkillRegistrations,
  REGISTRATIONS_PER_CONSUMER_MAX,
  skillRegistration,
  type ConsumerTools,
  type EnumValue,
  type JoinedConsumerToolsRow,
  type Knex,
  type ListPage,
  type Row,
  type SkillRegistration,
} from '@bus/db';
import { quotaOfColumns } from '@bus/identity';
import type { QuotaTier } from '@bus/limits';
import { newId } from '@bus/tokens';
import { AdminConflictError } from './errors';

/** A quota as the admin API shows it: the tier and the allowance it gives (docs/api.md#limits). */
export interface QuotaView {
  tier: QuotaTier | 'custom';
  per_second: number;
  burst: number;
  per_day: number;
}

export interface OrganisationView {
  id: string;
  name: string;
  kind: EnumValue<'organisation_kind'>;
  quota: QuotaView;
  created_at: string;
}

export interface WorkspaceView {
  id: string;
  organisation_id: string;
  name: string;
  quota: QuotaView;
  created_at: string;
}

export interface AppView {
  id: string;
  workspace_id: string;
  organisation_id: string;
  name: string;
  permissions: { system_ids: string[]; message_types: string[] };
  created_at: string;
}

export interface ConnectionView {
  client_id: string;
  app_id: string;
  workspace_id: string;
  organisation_id: string;
  kind: EnumValue<'connection_kind'>;
  status: EnumValue<'connection_status'>;
  /** What people call it; empty when it has no name (the pages show the client id instead). */
  name: string;
  description: string;
  credential_version: number;
  created_at: string;
  status_changed_at: string | null;
  /** Its last token, publish or receive, to the minute; null when never used. */
  last_used_at: string | null;
  /** A consumer connection's testing settings (docs/testing-tools.md); null when none is on. */
  consumer_tools: ConsumerToolsView | null;
}

/** ConsumerTools as the admin API shows and takes them. */
export interface ConsumerToolsView {
  faults: { duplicate_rate: number; delay_ms: number; early_expiry_rate: number };
  max_receives: number | null;
}

export function consumerToolsView(tools: ConsumerTools | null): ConsumerToolsView | null {
  if (!tools) return null;
  const { duplicateRate, delayMs, earlyExpiryRate } = tools.faults;
  return { faults: { duplicate_rate: duplicateRate, delay_ms: delayMs, early_expiry_rate: earlyExpiryRate }, max_receives: tools.maxReceives };
}

export interface NewRegistration {
  instanceLabel: string;
  libraryVersion: string;
  instance: Record<string, unknown>;
}

export type ReplayStatus = EnumValue<'replay_status'> | 'interrupted';

export interface ReplayView {
  replay_id: string;
  client_id: string;
  since: string;
  status: ReplayStatus;
  scanned: number;
  replayed: number;
  skipped: number;
  requested_at: string;
  finished_at: string | null;
  error: string | null;
}

export type ReplayOutcome = { status: 'succeeded'; scanned: number; replayed: number; skipped: number } | { status: 'failed'; error: string };

/** A quarantined Kafka record as the admin API lists it: metadata only, never the value or headers. */
export interface QuarantinedRecordView {
  id: string;
  topic: string;
  partition: number;
  offset: string;
  workspace_id: string | null;
  message_id: string | null;
  reason: string;
  quarantined_at: string;
  /** The value's length in bytes; null for a record without one (value.missing). */
  size_bytes: number | null;
}

export interface QuarantineFilter {
  workspaceId?: string;
  reason?: string;
  /** Only records with a greater id (the previous page's next_after). */
  after?: string;
  limit: number;
}

/** One page, oldest first; `nextAfter` is set when more records match after it. */
export interface QuarantinePage {
  records: QuarantinedRecordView[];
  nextAfter: string | null;
}

/** An instance_label is already bound to the connection: the admin API's 409, as the store finds it. */
export class RegistrationLabelTakenError extends AdminConflictError {
  override readonly name = 'RegistrationLabelTakenError';
}

/** The request would take the connection past REGISTRATIONS_PER_CONSUMER_MAX: the admin API's 409. */
export class RegistrationsFullError extends AdminConflictError {
  override readonly name = 'RegistrationsFullError';
}

/** What the portal's workspace page looks for among the connections of the apps a person may read. */
export interface ConnectionSearch {
  appIds: readonly string[];
  /** Found, case-insensitive, in the connection's id, name, description, kind or status, or its app's name or id; '' finds all. */
  text: string;
  /** Whether removed connections are found too. */
  removed: boolean;
}

export interface ConnectionSearchResult {
  connections: ConnectionView[];
  /** The apps' connections, removed ones included. */
  all: number;
  matching: number;
}

/** The admin API's reads, and the registrations and replay jobs it owns. Tenancy writes go through IdentityAdmin. */
export interface AdminStore {
  /** Every organisation, or only those `ids` names. */
  organisations(page?: ListPage, ids?: readonly string[]): Promise<OrganisationView[]>;
  organisation(id: string): Promise<OrganisationView | undefined>;
  workspaces(filter: { organisationId?: string; organisationIds?: readonly string[]; ids?: readonly string[] }, page?: ListPage): Promise<WorkspaceView[]>;
  workspace(id: string): Promise<WorkspaceView | undefined>;
  apps(filter: { workspaceId?: string }, page?: ListPage): Promise<AppView[]>;
  app(id: string): Promise<AppView | undefined>;
  connections(filter: { workspaceId?: string; appId?: string }, page?: ListPage): Promise<ConnectionView[]>;
  /** The first `limit` connections a search finds, oldest first, with how many it finds and how many the apps have. */
  connectionSearch(search: ConnectionSearch, limit: number): Promise<ConnectionSearchResult>;
  connection(clientId: string): Promise<ConnectionView | undefined>;
  registrations(consumerId: string): Promise<SkillRegistration[]>;
  /**
   * All or none; throws RegistrationLabelTakenError when a label is bound to the connection already,
   * RegistrationsFullError when the connection would hold more than REGISTRATIONS_PER_CONSUMER_MAX.
   */
  addRegistrations(consumerId: string, registrations: readonly NewRegistration[]): Promise<SkillRegistration[]>;
  /** False when the connection has no such registration. */
  removeRegistration(consumerId: string, registrationId: string): Promise<boolean>;
  createReplay(consumerId: string, since: Date): Promise<ReplayView>;
  replay(replayId: string): Promise<ReplayView | undefined>;
  /** Marks the job alive; a job not marked for `REPLAY_STALE_MS` reads as interrupted. */
  heartbeatReplay(replayId: string): Promise<void>;
  finishReplay(replayId: string, outcome: ReplayOutcome): Promise<void>;
  quarantinedRecords(filter: QuarantineFilter): Promise<QuarantinePage>;
}

/** A running replay whose process has not marked it for this long died with it: it reads as interrupted. */
export const REPLAY_STALE_MS = 60_000;

export class KnexAdminStore implements AdminStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): KnexAdminStore {
    return new KnexAdminStore(db);
  }

  async organisations(page?: ListPage, ids?: readonly string[]): Promise<OrganisationView[]> {
    const query = this.db('organisations').orderBy('created_at').orderBy('id').select('*');
    if (ids !== undefined) void query.whereIn('id', ids);
    return (await keysetPage(query, { table: 'organisations' }, page)).map(organisationView);
  }

  async organisation(id: string): Promise<OrganisationView | undefined> {
    const row = await this.db('organisations').where({ id }).first('*');
    return row && organisationView(row);
  }

  async workspaces(
    filter: { organisationId?: string; organisationIds?: readonly string[]; ids?: readonly string[] },
    page?: ListPage,
  ): Promise<WorkspaceView[]> {
    const query = this.db('workspaces').orderBy('created_at').orderBy('id').select('*');
    if (filter.organisationId !== undefined) void query.where({ organisation_id: filter.organisationId });
    if (filter.organisationIds !== undefined) void query.whereIn('organisation_id', filter.organisationIds);
    if (filter.ids !== undefined) void query.whereIn('id', filter.ids);
    return (await keysetPage(query, { table: 'workspaces' }, page)).map(workspaceView);
  }

  async workspace(id: string): Promise<WorkspaceView | undefined> {
    const row = await this.db('workspaces').where({ id }).first('*');
    return row && workspaceView(row);
  }

  async apps(filter: { workspaceId?: string }, page?: ListPage): Promise<AppView[]> {
    const query = this.db('apps').orderBy('created_at').orderBy('id').select('*');
    if (filter.workspaceId !== undefined) void query.where({ workspace_id: filter.workspaceId });
    return this.withPermissions(await keysetPage(query, { table: 'apps' }, page));
  }

  async app(id: string): Promise<AppView | undefined> {
    const rows = await this.db('apps').where({ id }).select('*');
    return (await this.withPermissions(rows))[0];
  }

  async connections(filter: { workspaceId?: string; appId?: string }, page?: ListPage): Promise<ConnectionView[]> {
    const query = this.connectionQuery().orderBy('c.created_at').orderBy('c.id');
    if (filter.workspaceId !== undefined) void query.where('c.workspace_id', filter.workspaceId);
    if (filter.appId !== undefined) void query.where('c.app_id', filter.appId);
    return (await keysetPage(query, { table: 'connections', alias: 'c' }, page)).map(connectionView);
  }

  async connectionSearch(search: ConnectionSearch, limit: number): Promise<ConnectionSearchResult> {
    if (search.appIds.length === 0) return { connections: [], all: 0, matching: 0 };
    const matches = (query: Knex.QueryBuilder) => {
      if (!search.removed) void query.whereNot('c.status', 'removed');
      // strpos rather than LIKE: the typed text is found as it is, % and _ included.
      if (search.text !== '') {
        void query.where((any) => {
          for (const column of ['c.id', 'c.name', 'c.description', 'c.kind::text', 'c.status::text', 'a.name', 'a.id']) {
            void any.orWhereRaw(`strpos(lower(${column}), lower(?)) > 0`, [search.text]);
          }
        });
      }
      return query;
    };
    const count = async (query: Knex.QueryBuilder) => Number(((await query.count({ n: '*' })) as Array<{ n: string }>)[0]?.n ?? 0);
    // One snapshot: a connection added meanwhile is in the list and both counts, or in none of them.
    return inOneSnapshot(this.db, async (tx) => {
      const listed = this.connectionQuery().transacting(tx).whereIn('c.app_id', search.appIds).orderBy('c.created_at').orderBy('c.id').limit(limit);
      const rows = (await matches(listed)) as ConnectionRow[];
      const matching = await count(matches(tx('connections as c').join('apps as a', 'a.id', 'c.app_id').whereIn('c.app_id', search.appIds)));
      const all = await count(tx('connections').whereIn('app_id', search.appIds));
      return { connections: rows.map(connectionView), all, matching };
    });
  }

  async connection(clientId: string): Promise<ConnectionView | undefined> {
    const row = await this.connectionQuery().where('c.id', clientId).first();
    return row && connectionView(row);
  }

  registrations(consumerId: string): Promise<SkillRegistration[]> {
    return readSkillRegistrations(this.db, consumerId);
  }

  async addRegistrations(consumerId: string, registrations: readonly NewRegistration[]): Promise<SkillRegistration[]> {
    if (registrations.length === 0) return [];
    const now = new Date();
    try {
      return await this.db.transaction(async (trx) => {
        const held = (await countHeldUnderLock(trx, consumerId, { holder: 'connections', table: 'skill_registrations', column: 'consumer_id' }))?.held ?? 0;
        if (held + registrations.length > REGISTRATIONS_PER_CONSUMER_MAX) {
          throw new RegistrationsFullError(
            `a consumer connection holds at most ${REGISTRATIONS_PER_CONSUMER_MAX} skill registrations: this one has ${held}, the request adds ${registrations.length}`,
          );
        }
        const rows = await trx('skill_registrations')
          .insert(
            registrations.map((r) => ({
              id: newId('r'),
              consumer_id: consumerId,
              instance_label: r.instanceLabel,
              library_version: r.libraryVersion,
              instance: JSON.stringify(r.instance),
              registered_at: now,
            })),
          )
          .returning(['id', 'library_version', 'instance', 'registered_at']);
        return rows.map(skillRegistration);
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new RegistrationLabelTakenError('an instance_label of the request is already registered on this connection');
      }
      throw err;
    }
  }

  async removeRegistration(consumerId: string, registrationId: string): Promise<boolean> {
    return (await this.db('skill_registrations').where({ consumer_id: consumerId, id: registrationId }).delete()) > 0;
  }

  async createReplay(consumerId: string, since: Date): Promise<ReplayView> {
    const now = new Date();
    const [row] = await this.db('replay_jobs')
      .insert({ id: newId('p'), consumer_id: consumerId, since, requested_at: now, heartbeat_at: now })
      .returning('*');
    return replayView(row!, now);
  }

  async replay(replayId: string): Promise<ReplayView | undefined> {
    const row = await this.db('replay_jobs').where({ id: replayId }).first('*');
    return row && replayView(row, new Date());
  }

  async heartbeatReplay(replayId: string): Promise<void> {
    await this.db('replay_jobs').where({ id: replayId, status: 'running' }).update({ heartbeat_at: new Date() });
  }

  async finishReplay(replayId: string, outcome: ReplayOutcome): Promise<void> {
    const counts =
      outcome.status === 'succeeded' ? { scanned: outcome.scanned, replayed: outcome.replayed, skipped: outcome.skipped } : { error: outcome.error };
    await this.db('replay_jobs')
      .where({ id: replayId })
      .update({ status: outcome.status, ...counts, finished_at: new Date() });
  }

  async quarantinedRecords(filter: QuarantineFilter): Promise<QuarantinePage> {
    const query = this.db('quarantined_records')
      .orderBy('id')
      .limit(filter.limit + 1)
      // The raw size column hides the row type from knex: the selection is declared from the table's.
      .select<QuarantineRow[]>(
        'id',
        'topic',
        'kafka_partition',
        'kafka_offset',
        'workspace_id',
        'message_id',
        'reason',
        'quarantined_at',
        this.db.raw('octet_length(value) AS size_bytes'),
      );
    if (filter.workspaceId !== undefined) void query.where({ workspace_id: filter.workspaceId });
    if (filter.reason !== undefined) void query.where({ reason: filter.reason });
    if (filter.after !== undefined) void query.where('id', '>', filter.after);
    const rows = await query;
    const page = rows.slice(0, filter.limit).map(quarantinedRecordView);
    return { records: page, nextAfter: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null };
  }

  private connectionQuery() {
    // A join: knex types single tables only, so the selection is declared from the tables' rows.
    return this.db('connections as c')
      .join('apps as a', 'a.id', 'c.app_id')
      .leftJoin('consumer_tools as t', 't.consumer_id', 'c.id')
      .select<ConnectionRow[]>(
        'c.id',
        'c.app_id',
        'c.workspace_id',
        'a.organisation_id',
        'c.kind',
        'c.status',
        'c.credential_version',
        'c.created_at',
        'c.status_changed_at',
        'c.name',
        'c.description',
        'c.last_used_at',
        ...consumerToolsColumns('t'),
      );
  }

  private async withPermissions(rows: Array<Row<'apps'>>): Promise<AppView[]> {
    const permissions = await this.db('permissions')
      .whereIn(
        'app_id',
        rows.map((r) => r.id),
      )
      .orderBy('value')
      .select('app_id', 'kind', 'value');
    return rows.map((r) => {
      const own = permissions.filter((p) => p.app_id === r.id);
      return {
        id: r.id,
        workspace_id: r.workspace_id,
        organisation_id: r.organisation_id,
        name: r.name,
        permissions: {
          system_ids: own.filter((p) => p.kind === 'system_id').map((p) => p.value),
          message_types: own.filter((p) => p.kind === 'message_type').map((p) => p.value),
        },
        created_at: r.created_at.toISOString(),
      };
    });
  }
}

type ConnectionRow = Row<'connections'> & Pick<Row<'apps'>, 'organisation_id'> & JoinedConsumerToolsRow;
type QuarantineRow = Omit<Row<'quarantined_records'>, 'headers' | 'value'> & { size_bytes: number | null };

function quotaView(row: Row<'organisations' | 'workspaces'>): QuotaView {
  const q = quotaOfColumns(row);
  return { tier: row.quota_tier, per_second: q.perSecond, burst: q.burst, per_day: q.perDay };
}

function organisationView(r: Row<'organisations'>): OrganisationView {
  return { id: r.id, name: r.name, kind: r.kind, quota: quotaView(r), created_at: r.created_at.toISOString() };
}

function workspaceView(r: Row<'workspaces'>): WorkspaceView {
  return { id: r.id, organisation_id: r.organisation_id, name: r.name, quota: quotaView(r), created_at: r.created_at.toISOString() };
}

function connectionView(r: ConnectionRow): ConnectionView {
  return {
    client_id: r.id,
    app_id: r.app_id,
    workspace_id: r.workspace_id,
    organisation_id: r.organisation_id,
    kind: r.kind,
    status: r.status,
    name: r.name,
    description: r.description,
    credential_version: r.credential_version,
    created_at: r.created_at.toISOString(),
    status_changed_at: r.status_changed_at?.toISOString() ?? null,
    last_used_at: r.last_used_at?.toISOString() ?? null,
    consumer_tools: consumerToolsView(consumerToolsOf(r)),
  };
}

function replayView(r: Row<'replay_jobs'>, now: Date): ReplayView {
  const stale = r.status === 'running' && now.getTime() - r.heartbeat_at.getTime() > REPLAY_STALE_MS;
  return {
    replay_id: r.id,
    client_id: r.consumer_id,
    since: r.since.toISOString(),
    status: stale ? 'interrupted' : r.status,
    scanned: r.scanned,
    replayed: r.replayed,
    skipped: r.skipped,
    requested_at: r.requested_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
    error: r.error,
  };
}

function quarantinedRecordView(r: QuarantineRow): QuarantinedRecordView {
  return {
    id: String(r.id),
    topic: r.topic,
    partition: r.kafka_partition,
    offset: String(r.kafka_offset),
    workspace_id: r.workspace_id,
    message_id: r.message_id,
    reason: r.reason,
    quarantined_at: r.quarantined_at.toISOString(),
    size_bytes: r.size_bytes,
  };
}
