import type { Request, Response } from 'express';
import { pageOfRows, type Activity, type ListPage } from '@bus/db';
import { sourceAddress } from '@bus/limits';
import type { AdminStore, AppView, ConnectionView, OrganisationView, WorkspaceView } from '../admin-store';
import { AdminNotFoundError, AdminRequestInvalidError } from '../errors';
import { PortalForbiddenError } from './errors';
import type { PeopleStore, Session } from './people-store';
import { allows, organisationsOf, type Action, type Target } from './policy';

export interface PortalDataDeps {
  /** Its failures are the 503 admin.unavailable (service.ts wraps it). */
  store: AdminStore;
  people: PeopleStore;
}

export type WorkspaceUsage = WorkspaceView & { accepted_today: number };
export type OrganisationWithWorkspaces = OrganisationView & { workspaces: WorkspaceUsage[] };
/** #/components/schemas/Organisations of portal.json. */
export interface PortalOrganisations {
  organisations: OrganisationWithWorkspaces[];
  next_after: string | null;
}
export type AppWithConnections = AppView & { connections: ConnectionView[] };

/**
 * Connections one workspace answer lists at most: a workspace's connections are never deleted (removed
 * ones stay, hidden unless asked for), so a page lists the first ones found and says how many more
 * there are; the search narrows it.
 */
export const WORKSPACE_CONNECTIONS_SHOWN = 500;

/** #/components/schemas/WorkspaceDetail of portal.json. */
export interface WorkspaceDetail {
  workspace: WorkspaceView;
  apps: AppWithConnections[];
  /** How many connections the apps have (removed ones included) and how many the search found; the answer lists at most WORKSPACE_CONNECTIONS_SHOWN. */
  connection_counts: { all: number; matching: number };
}

/**
 * What a person sees and changes, each decided by policy.ts on the server: the pages and the portal
 * /api/* routes both read through here, so a page never shows what the API would refuse.
 */
export class PortalData {
  constructor(private readonly deps: PortalDataDeps) {}

  /** The workspace's messages accepted at or after `since`, counted up to `cap`. */
  acceptedSince(workspaceId: string, since: Date, cap: number): Promise<number> {
    return this.deps.people.acceptedSince(workspaceId, since, cap);
  }

  /** The names of the organisations the person's grants name (the operator's grant names none). */
  async organisationNames(session: Session): Promise<Map<string, string>> {
    const found = await Promise.all(organisationsOf(session.grants).ids.map((id) => this.deps.store.organisation(id)));
    return new Map(found.filter((o): o is OrganisationView => o !== undefined).map((o) => [o.id, o.name]));
  }

  /**
   * A page of the organisations a person has a role in (all for the operator), oldest first, each with
   * the workspaces they may see in it: its own (at most 100, docs/admin.md) and, for a vendor, those it
   * has apps in (at most 100 too). `next_after` as the admin API's lists; an `after` naming no
   * organisation of theirs is 400.
   */
  async organisations(session: Session, page: ListPage): Promise<PortalOrganisations> {
    const scope = organisationsOf(session.grants);
    const rows = await this.deps.store.organisations(
      { limit: page.limit + 1, ...(page.after === undefined ? {} : { after: page.after }) },
      scope.all ? undefined : scope.ids,
    );
    if (rows.length === 0 && page.after !== undefined && !(scope.all ? await this.deps.store.organisation(page.after) : scope.ids.includes(page.after))) {
      throw new AdminRequestInvalidError(`after: no organisation of yours has the id ${page.after}`);
    }
    const { items, nextAfter: next_after } = pageOfRows(rows, page.limit, (o) => o.id);
    const organisations = items.filter((o) => allows(session.grants, 'organisation.read', { organisationId: o.id }));
    if (organisations.length === 0) return { organisations: [], next_after };
    const organisationIds = organisations.map((o) => o.id);
    const vendorWorkspaceIds = new Set(await this.deps.people.workspacesWithAppsOf(organisationIds));
    const candidates = [
      ...(await this.deps.store.workspaces({ organisationIds })),
      ...(vendorWorkspaceIds.size > 0 ? await this.deps.store.workspaces({ ids: [...vendorWorkspaceIds] }) : []),
    ];
    const visible = dedupe(candidates).filter((w) => this.mayReadWorkspace(session, w, vendorWorkspaceIds));
    const usage = await this.deps.people.acceptedToday(visible.map((w) => w.id));
    const withUsage = visible.map((w) => ({ ...w, accepted_today: usage.get(w.id) ?? 0 }));
    return {
      organisations: organisations.map((o) => ({
        ...o,
        workspaces: withUsage.filter((w) => w.organisation_id === o.id || (o.kind === 'vendor' && vendorWorkspaceIds.has(w.id))),
      })),
      next_after,
    };
  }

  /**
   * One workspace with the apps the person may read in it (404 when none) and the first
   * WORKSPACE_CONNECTIONS_SHOWN of their connections the search finds, each under its app.
   */
  async workspace(session: Session, workspaceId: string, search: { text: string; removed: boolean }): Promise<WorkspaceDetail> {
    const workspace = await this.deps.store.workspace(workspaceId);
    if (!workspace) throw new AdminNotFoundError('workspace', workspaceId);
    const apps = (await this.deps.store.apps({ workspaceId })).filter((a) => allows(session.grants, 'app.read', appTarget(workspace, a)));
    if (apps.length === 0 && !allows(session.grants, 'workspace.read', { organisationId: workspace.organisation_id })) {
      throw new PortalForbiddenError('reading this workspace');
    }
    const found = await this.deps.store.connectionSearch({ appIds: apps.map((a) => a.id), ...search }, WORKSPACE_CONNECTIONS_SHOWN);
    return {
      workspace,
      apps: apps.map((a) => ({ ...a, connections: found.connections.filter((c) => c.app_id === a.id) })),
      connection_counts: { all: found.all, matching: found.matching },
    };
  }

  /**
   * A workspace's per-minute activity, summed over all its connections: only for who may read the
   * whole workspace (a vendor sees its own connections' activity, not the house's).
   */
  async workspaceActivity(session: Session, workspaceId: string, minutes: number): Promise<Activity> {
    const workspace = await this.deps.store.workspace(workspaceId);
    if (!workspace) throw new AdminNotFoundError('workspace', workspaceId);
    if (!this.mayReadWorkspaceActivity(session, workspace)) throw new PortalForbiddenError("reading this workspace's activity");
    return this.deps.people.activity({ workspaceId }, minutes);
  }

  /** Whether the workspace page shows the workspace's charts. */
  mayReadWorkspaceActivity(session: Session, workspace: WorkspaceView): boolean {
    return allows(session.grants, 'workspace.read', { organisationId: workspace.organisation_id });
  }

  /** A connection's per-minute activity, for who may read the connection. */
  async connectionActivity(session: Session, clientId: string, minutes: number): Promise<Activity> {
    await this.authorisedConnection(session, 'connection.read', clientId);
    return this.deps.people.activity({ connectionId: clientId }, minutes);
  }

  /** Whether the person may do `action` to a connection of `app` (for the pages' buttons). */
  mayOnApp(session: Session, action: Action, workspace: WorkspaceView, app: AppView): boolean {
    return allows(session.grants, action, appTarget(workspace, app));
  }

  /** The app's target, or 403 when the person may not do `action` to it (404 when there is no such app). */
  async authoriseOnApp(session: Session, action: Action, appId: string): Promise<Target> {
    const app = await this.deps.store.app(appId);
    if (!app) throw new AdminNotFoundError('app', appId);
    const workspace = await this.deps.store.workspace(app.workspace_id);
    if (!workspace) throw new AdminNotFoundError('workspace', app.workspace_id);
    const target = appTarget(workspace, app);
    if (!allows(session.grants, action, target)) throw new PortalForbiddenError(action);
    return target;
  }

  async authoriseOnConnection(session: Session, action: Action, clientId: string): Promise<Target> {
    return (await this.authorisedConnection(session, action, clientId)).target;
  }

  /** The connection and its target once the person may do `action` to it (404 when there is none, else 403). */
  async authorisedConnection(session: Session, action: Action, clientId: string): Promise<{ connection: ConnectionView; target: Target }> {
    const connection = await this.deps.store.connection(clientId);
    if (!connection) throw new AdminNotFoundError('connection', clientId);
    return { connection, target: await this.authoriseOnApp(session, action, connection.app_id) };
  }

  /** Writes the audit entry of a change a person made (never a secret: the route names ids only). */
  async audit(req: Request, res: Response, session: Session, entry: { action: string; target: string; organisationId: string; status: number }): Promise<void> {
    await this.deps.people.audit({
      actorKind: 'person',
      actor: `${session.name} (${session.subject})`,
      ...entry,
      sourceAddress: sourceAddress(req),
      requestId: typeof res.locals.requestId === 'string' ? res.locals.requestId : null,
    });
  }

  private mayReadWorkspace(session: Session, workspace: WorkspaceView, vendorWorkspaceIds: ReadonlySet<string>): boolean {
    return allows(session.grants, 'workspace.read', { organisationId: workspace.organisation_id }) || vendorWorkspaceIds.has(workspace.id);
  }
}

function appTarget(workspace: WorkspaceView, app: AppView): Target {
  return { organisationId: workspace.organisation_id, ownerId: app.organisation_id };
}

function dedupe(workspaces: readonly WorkspaceView[]): WorkspaceView[] {
  return [...new Map(workspaces.map((w) => [w.id, w])).values()];
}
