import { createHash, randomBytes } from 'node:crypto';
import { readActivity, type Activity, type Knex, type Row } from '@bus/db';
import type { Person } from './person';

/** A sign-in is refused this long after it began (the person took too long at the provider). */
export const SIGN_IN_VALIDITY_MS = 10 * 60_000;

export interface Session extends Person {
  csrfToken: string;
  expiresAt: Date;
}

export interface AuditEntry {
  actorKind: 'person' | 'operator_basic';
  actor: string;
  action: string;
  target: string;
  organisationId: string | null;
  sourceAddress: string;
  requestId: string | null;
  status: number;
}

export interface AuditView {
  id: string;
  at: string;
  actor_kind: 'person' | 'operator_basic';
  actor: string;
  action: string;
  target: string;
  organisation_id: string | null;
  source_address: string;
  status: number;
}

/** The admin API's collections whose changes are audited with the organisation they belong to. */
export type AuditedCollection = 'organisations' | 'workspaces' | 'apps' | 'connections' | 'bindings';

/** The table of each audited collection. */
const AUDITED_TABLES = {
  organisations: 'organisations',
  workspaces: 'workspaces',
  apps: 'apps',
  connections: 'connections',
  bindings: 'identity_bindings',
} as const satisfies Record<AuditedCollection, string>;

type OwnedTable = (typeof AUDITED_TABLES)[AuditedCollection];

/** What each audited table belongs to, through which column, up to the organisation (which owns itself). */
const OWNER_OF: Partial<Record<OwnedTable, { column: string; table: OwnedTable }>> = {
  identity_bindings: { column: 'connection_id', table: 'connections' },
  connections: { column: 'app_id', table: 'apps' },
  apps: { column: 'workspace_id', table: 'workspaces' },
  workspaces: { column: 'organisation_id', table: 'organisations' },
};

/** A fresh random token (cookie, state, CSRF): 32 bytes, base64url. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What is stored of a cookie or state: its SHA-256, so a read of the table yields nothing usable. */
function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Sign-ins in progress, sessions and the audit log in Postgres (migration 013_portal_people). */
export class PeopleStore {
  constructor(private readonly db: Knex) {}

  async beginSignIn(state: string, codeVerifier: string, nonce: string): Promise<void> {
    await this.db('portal_logins').insert({ state_hash: digest(state), code_verifier: codeVerifier, nonce });
  }

  /** Takes (once) the sign-in of this state, if it began less than SIGN_IN_VALIDITY_MS ago. */
  async takeSignIn(state: string): Promise<{ codeVerifier: string; nonce: string } | undefined> {
    const rows = await this.db('portal_logins')
      .where({ state_hash: digest(state) })
      .delete()
      .returning(['code_verifier', 'nonce', 'created_at']);
    const row = rows[0];
    if (!row || Date.now() - row.created_at.getTime() > SIGN_IN_VALIDITY_MS) return undefined;
    return { codeVerifier: row.code_verifier, nonce: row.nonce };
  }

  /** A new session; answers the cookie value (kept only as its hash). */
  async createSession(person: Person, maxAgeMs: number): Promise<{ cookie: string; session: Session }> {
    const cookie = randomToken();
    const session: Session = { ...person, csrfToken: randomToken(), expiresAt: new Date(Date.now() + maxAgeMs) };
    await this.db('portal_sessions').insert({
      id_hash: digest(cookie),
      subject: session.subject,
      name: session.name,
      // Grant and the column's row type must agree: this checks one way, touchSession's read the other.
      grants: JSON.stringify(session.grants satisfies Row<'portal_sessions'>['grants']),
      csrf_token: session.csrfToken,
      expires_at: session.expiresAt,
    });
    return { cookie, session };
  }

  /**
   * The live session of a cookie, marked as used now: one statement, so a session past its idle or
   * absolute timeout is never extended and never answered.
   */
  async touchSession(cookie: string, idleTimeoutMs: number): Promise<Session | undefined> {
    const rows = await this.db('portal_sessions')
      .where({ id_hash: digest(cookie) })
      .andWhere('expires_at', '>', this.db.fn.now())
      .andWhereRaw('last_seen_at > now() - make_interval(secs => ?)', [idleTimeoutMs / 1000])
      .update({ last_seen_at: this.db.fn.now() })
      .returning(['subject', 'name', 'grants', 'csrf_token', 'expires_at']);
    const row = rows[0];
    return row && { subject: row.subject, name: row.name, grants: row.grants, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async endSession(cookie: string): Promise<void> {
    await this.db('portal_sessions')
      .where({ id_hash: digest(cookie) })
      .delete();
  }

  async audit(entry: AuditEntry): Promise<void> {
    await this.db('audit_log').insert({
      actor_kind: entry.actorKind,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      organisation_id: entry.organisationId,
      source_address: entry.sourceAddress,
      request_id: entry.requestId,
      status: entry.status,
    });
  }

  /**
   * The organisation an admin change's target belongs to, for its audit entry: an organisation is its
   * own; a workspace, app or connection is its workspace's house (as the portal's entries are). Null
   * when there is no such target (a refused create, a removed connection).
   */
  async organisationOfTarget(collection: AuditedCollection, id: string): Promise<string | null> {
    const table = AUDITED_TABLES[collection];
    const query = this.db(table).where(`${table}.id`, id);
    // Join upwards, one owner at a time, until the organisation.
    let child: OwnedTable = table;
    for (let up = OWNER_OF[child]; up; up = OWNER_OF[child]) {
      query.join(up.table, `${up.table}.id`, `${child}.${up.column}`);
      child = up.table;
    }
    // An alias across joins: knex types plain single-table selections only.
    const row = await query.first<{ organisation_id: string } | undefined>({ organisation_id: 'organisations.id' });
    return row?.organisation_id ?? null;
  }

  /**
   * The newest entries, of the given organisations only unless `all` (the operator); with `search`, only
   * those whose actor, action or target contains it (case-insensitive, taken literally).
   */
  async auditEntries(scope: { all: boolean; organisationIds: string[] }, limit: number, search?: string): Promise<AuditView[]> {
    const query = this.db('audit_log').orderBy('id', 'desc').limit(limit);
    if (!scope.all) query.whereIn('organisation_id', scope.organisationIds);
    if (search) {
      const pattern = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query.whereRaw('(actor ILIKE ? OR action ILIKE ? OR target ILIKE ?)', [pattern, pattern, pattern]);
    }
    const rows = await query.select('id', 'at', 'actor_kind', 'actor', 'action', 'target', 'organisation_id', 'source_address', 'status');
    return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
  }

  /** Messages each workspace accepted since midnight UTC (today's usage against the daily quota). */
  async acceptedToday(workspaceIds: readonly string[]): Promise<Map<string, number>> {
    if (workspaceIds.length === 0) return new Map();
    const rows = await this.db('accepted_messages')
      .whereIn('workspace_id', workspaceIds)
      .andWhereRaw("accepted_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'")
      .groupBy('workspace_id')
      .select('workspace_id')
      .count({ count: '*' });
    return new Map(rows.map((r) => [r.workspace_id, Number(r.count)]));
  }

  /** The last `minutes` minutes of a workspace's or a connection's per-minute activity (the charts). */
  activity(of: { workspaceId: string } | { connectionId: string }, minutes: number): Promise<Activity> {
    return readActivity(this.db, of, minutes);
  }

  /** The workspace's messages accepted at or after `since`, counted up to `cap` (the scan stops there). */
  async acceptedSince(workspaceId: string, since: Date, cap: number): Promise<number> {
    const capped = this.db('accepted_messages').where({ workspace_id: workspaceId }).andWhere('accepted_at', '>=', since).select(this.db.raw('1')).limit(cap);
    const [row] = await this.db.from(capped.as('capped')).count({ count: '*' });
    return Number(row?.count ?? 0);
  }

  /** The workspaces in which these organisations own apps (what a vendor sees). */
  async workspacesWithAppsOf(organisationIds: readonly string[]): Promise<string[]> {
    if (organisationIds.length === 0) return [];
    const rows = await this.db('apps').whereIn('organisation_id', organisationIds).distinct('workspace_id');
    return rows.map((r) => r.workspace_id);
  }
}
