import type { Router } from 'express';
import type { ConnectionView, WorkspaceView } from '../admin-store';
import { ActivitySection } from './activity-charts';
import { PORTAL_SCRIPT, PORTAL_STYLE } from './assets';
import { SaidRegion, Table, Time } from './components';
import { ConnectionDetailsFields, ConnectionPageLinks, LastUsed } from './connection-pages';
import { MESSAGE_TYPES } from '../permission-choices';
import type { AppWithConnections, OrganisationWithWorkspaces, PortalData, PortalOrganisations, WorkspaceDetail } from './portal-data';
import type { AuditView, PeopleStore } from './people-store';
import { allows, organisationsOf } from './policy';
import { requireSession, sessionOf } from './sign-in';
import { sendPage, type OrganisationNames } from './layout';
import { createRouter } from '@bus/http';

/**
 * The portal's pages (docs/portal.md): server-rendered HTML from the same data the portal API serves,
 * showing only what the person's roles allow and offering only the changes the server would accept.
 */
export function portalPages(deps: { data: PortalData; people: PeopleStore }): Router {
  const router = createRouter();

  router.get('/portal/assets/portal.js', (_req, res) => {
    res.type('text/javascript').set('Cache-Control', 'no-cache').send(PORTAL_SCRIPT);
  });
  router.get('/portal/assets/portal.css', (_req, res) => {
    res.type('text/css').set('Cache-Control', 'no-cache').send(PORTAL_STYLE);
  });

  // The header names the person's organisations by name: looked up for every page (a few rows by id).
  router.use('/portal', async (req, res, next) => {
    const session = sessionOf(res);
    if (session && req.method === 'GET' && !req.path.startsWith('/assets/')) res.locals.organisationNames = await deps.data.organisationNames(session);
    next();
  });

  router.get('/portal', async (req, res) => {
    const session = sessionOf(res);
    if (!session) {
      sendPage(res, 'Sign in', undefined, <Welcome />);
      return;
    }
    // A page as the API's (default size); an `after` not of an organisation id's form starts at the first.
    const after = typeof req.query.after === 'string' && ORGANISATION_ID.test(req.query.after) ? req.query.after : undefined;
    const page = await deps.data.organisations(session, { limit: ORGANISATIONS_PER_PAGE, ...(after === undefined ? {} : { after }) });
    sendPage(res, 'Organisations', session, <OrganisationsPage page={page} />);
  });

  router.get('/portal/workspaces/:w', async (req, res) => {
    const session = requireSession(res);
    const filter = connectionFilter(req.query);
    const { workspace, apps, connection_counts: counts } = await deps.data.workspace(session, String(req.params.w), filter);
    const controlled = apps.map((app) => ({
      app,
      may: {
        create: deps.data.mayOnApp(session, 'connection.create', workspace, app),
        change: deps.data.mayOnApp(session, 'connection.rotate', workspace, app),
        permissions: deps.data.mayOnApp(session, 'app.permissions', workspace, app),
      },
    }));
    const choices = { messageTypes: MESSAGE_TYPES, systemIds: apps.flatMap((a) => a.permissions.system_ids) };
    sendPage(
      res,
      `Workspace ${workspace.name}`,
      session,
      <WorkspacePage
        workspace={workspace}
        apps={controlled}
        filter={filter}
        counts={counts}
        choices={choices}
        activity={deps.data.mayReadWorkspaceActivity(session, workspace)}
      />,
    );
  });

  router.get('/portal/audit', async (req, res) => {
    const session = requireSession(res);
    const scope = organisationsOf(session.grants);
    const readable = scope.ids.filter((id) => allows(session.grants, 'audit.read', { organisationId: id }));
    if (!scope.all && readable.length === 0) {
      sendPage(res, 'Audit log', session, <NoAudit />);
      return;
    }
    // What to find, as the workspace page's connection filter: at most 100 characters, kept as typed.
    // Control characters go: Postgres cannot compare a NUL, and no entry holds one.
    const search = typeof req.query.q === 'string' ? withoutControls(req.query.q).trim().slice(0, 100) : '';
    const entries = await deps.people.auditEntries({ all: scope.all, organisationIds: readable }, 100, search || undefined);
    const names = (res.locals.organisationNames ?? new Map()) as OrganisationNames;
    sendPage(res, 'Audit log', session, <AuditPage entries={entries} search={search} names={names} />);
  });
  return router;
}

function Welcome() {
  return (
    <>
      <h1>Message bus portal</h1>
      <p>Houses, vendors and the operator manage their workspaces, apps and connections here.</p>
      <p>
        <a href="/portal/login">Sign in</a>
      </p>
    </>
  );
}

export function OrganisationsPage({ page: { organisations, next_after: nextAfter } }: { page: PortalOrganisations }) {
  return (
    <>
      <h1>Organisations and workspaces</h1>
      {organisations.length > 0 ? organisations.map((o) => <OrganisationSection organisation={o} />) : <p>No organisations.</p>}
      {nextAfter !== null && (
        <p>
          <a href={`/portal?after=${nextAfter}`} rel="next">
            Next organisations
          </a>
        </p>
      )}
    </>
  );
}

function OrganisationSection({ organisation: o }: { organisation: OrganisationWithWorkspaces }) {
  const rows = o.workspaces.map((w) => (
    <tr>
      <td>
        <a href={`/portal/workspaces/${w.id}`}>{w.name}</a>
      </td>
      <td>
        <code>{w.id}</code>
      </td>
      <td>{w.quota.tier}</td>
      <td>{w.accepted_today}</td>
      <td>{w.quota.per_day}</td>
    </tr>
  ));
  return (
    <section aria-labelledby={`org-${o.id}`}>
      <h2 id={`org-${o.id}`}>
        {o.name}{' '}
        <small>
          ({o.kind}, <code>{o.id}</code>)
        </small>
      </h2>
      <Table caption="Workspaces" columns={['Workspace', 'Id', 'Tier', 'Accepted today', 'Daily quota per connection']} rows={rows} empty="No workspaces" />
    </section>
  );
}

function NoAudit() {
  return (
    <>
      <h1>Audit log</h1>
      <p>Your roles read no audit entries: the operator and the house admins read them.</p>
    </>
  );
}

export function AuditPage({ entries, search, names }: { entries: readonly AuditView[]; search: string; names: OrganisationNames }) {
  const organisation = (id: string | null) => (id === null ? '' : (names.get(id) ?? <code>{id}</code>));
  const rows = entries.map((e) => (
    <tr>
      <td>
        <Time at={e.at} />
      </td>
      <td>{e.actor}</td>
      <td>{e.action}</td>
      <td>
        <code>{e.target}</code>
      </td>
      <td>{organisation(e.organisation_id)}</td>
      <td>{e.source_address}</td>
      <td>{e.status}</td>
    </tr>
  ));
  return (
    <>
      <h1>Audit log</h1>
      <form method="get" action="/portal/audit">
        <label for="audit-q">Find (who, what or target contains)</label>
        <input id="audit-q" name="q" maxlength={100} value={search} />
        <button type="submit">Find</button>
        {search && (
          <>
            {' '}
            <a href="/portal/audit">Show all</a>
          </>
        )}
      </form>
      <Table
        scrolls
        class="audit"
        caption={`The newest 100 changes you may read${search ? ` whose who, what or target contains “${search}”` : ''}`}
        columns={['When', 'Who', 'What', 'Target', 'Organisation', 'From', 'Status']}
        rows={rows}
        empty={search ? 'Nothing matches' : 'Nothing yet'}
      />
    </>
  );
}

/** What the person may do to an app, as policy.ts decides: the section offers only those controls. */
interface AppControls {
  create: boolean;
  change: boolean;
  permissions: boolean;
}

/** What an app's permissions are chosen from: the catalogue's message types and the workspace's known system ids. */
export interface PermissionChoices {
  messageTypes: readonly string[];
  systemIds: readonly string[];
}

/** The workspace page's connection filter: removed connections hidden unless asked for, and a text to find. */
interface ConnectionFilter {
  text: string;
  removed: boolean;
}

/**
 * The connection search as typed (at most 100 characters), found by the store in a connection's id,
 * name, description, kind, status or its app's name or id. Control characters go, as in the audit
 * search: Postgres cannot compare a NUL, and no name holds one.
 */
function connectionFilter(query: Record<string, unknown>): ConnectionFilter {
  const text = typeof query.q === 'string' ? withoutControls(query.q).trim().slice(0, 100) : '';
  return { text, removed: query.removed === '1' };
}

interface WorkspacePageProps {
  workspace: WorkspaceView;
  apps: readonly { app: AppWithConnections; may: AppControls }[];
  filter: ConnectionFilter;
  counts: WorkspaceDetail['connection_counts'];
  choices: PermissionChoices;
  /** Whether the page shows the workspace's activity charts. */
  activity: boolean;
}

export function WorkspacePage({ workspace, apps, filter, counts, choices, activity }: WorkspacePageProps) {
  const { quota } = workspace;
  return (
    <>
      <h1>
        Workspace {workspace.name}{' '}
        <small>
          <code>{workspace.id}</code>
        </small>
      </h1>
      <p>
        Tier {quota.tier}: {quota.per_second} a second, bursts of {quota.burst}, {quota.per_day} a day per connection.
      </p>
      <SecretPanel />
      {activity && <ActivitySection charts={{ api: `/api/portal/workspaces/${workspace.id}/activity`, of: 'this workspace', queue: true, refusals: true }} />}
      <FilterForm workspaceId={workspace.id} filter={filter} counts={counts} shown={apps.reduce((n, a) => n + a.app.connections.length, 0)} />
      {apps.length > 0 ? apps.map(({ app, may }) => <AppSection app={app} filter={filter} may={may} choices={choices} />) : <p>No apps you can see.</p>}
    </>
  );
}

/** A plain GET form, so the filter works without the script and its result can be linked to. */
function FilterForm({
  workspaceId,
  filter,
  counts,
  shown,
}: {
  workspaceId: string;
  filter: ConnectionFilter;
  counts: WorkspaceDetail['connection_counts'];
  shown: number;
}) {
  return (
    <>
      <form method="get" action={`/portal/workspaces/${workspaceId}`} role="search" aria-label="Connections">
        <label for="connection-search">Find connections</label>{' '}
        <input id="connection-search" name="q" type="search" size={30} maxlength={100} value={filter.text} />{' '}
        <label for="connection-removed">
          <input id="connection-removed" name="removed" type="checkbox" value="1" checked={filter.removed} /> Show removed connections
        </label>{' '}
        <button type="submit">Filter</button>
      </form>
      <p id="connection-count">
        {shown < counts.matching
          ? `Showing the first ${shown} of ${counts.matching} connections found (of ${counts.all}); narrow the search to see the others.`
          : `Showing ${shown} of ${counts.all} connections${filter.removed ? '' : ' (removed ones hidden)'}.`}
      </p>
    </>
  );
}

function AppSection({ app, filter, may, choices }: { app: AppWithConnections; filter: ConnectionFilter; may: AppControls; choices: PermissionChoices }) {
  const rows = app.connections.map((c) => <ConnectionRow connection={c} mayChange={may.change} />);
  const { system_ids: systemIds, message_types: messageTypes } = app.permissions;
  return (
    <section aria-labelledby={`app-${app.id}`}>
      <h2 id={`app-${app.id}`}>
        App {app.name}{' '}
        <small>
          <code>{app.id}</code>, owned by <code>{app.organisation_id}</code>
        </small>
      </h2>
      <p>
        May publish as system ids {systemIds.join(', ') || 'none'}; message types {messageTypes.join(', ') || 'none'}.
      </p>
      {may.permissions && <PermissionsForm app={app} choices={choices} />}
      <Table
        scrolls
        caption={`Connections of ${app.name}`}
        columns={['Connection', 'Kind', 'Status', 'Credential version', 'Created', 'Last used', 'Actions']}
        rows={rows}
        empty={filter.text !== '' ? 'No connections match the filter' : filter.removed ? 'No connections' : 'No connections (removed ones hidden)'}
      />
      {may.create && <CreateConnectionForm app={app} />}
    </section>
  );
}

function ConnectionRow({ connection: c, mayChange }: { connection: AppWithConnections['connections'][number]; mayChange: boolean }) {
  const said = `said-${c.client_id}`;
  return (
    <tr id={`connection-${c.client_id}`}>
      <td>
        <ConnectionLabel connection={c} />
        <ConnectionPageLinks connection={c} />
      </td>
      <td class="word">{c.kind}</td>
      <td class="word">{c.status}</td>
      <td>{c.credential_version}</td>
      <td>
        <Time at={c.created_at} />
      </td>
      <td>
        <LastUsed connection={c} />
      </td>
      <td>
        {mayChange && c.status === 'active' && <ActiveConnectionForms clientId={c.client_id} said={said} />}
        {/* Removal deletes the credentials for good: offered once the connection is revoked, as a second step. */}
        {mayChange && c.status === 'revoked' && <RemoveConnectionForm clientId={c.client_id} workspaceId={c.workspace_id} />}
        {mayChange && <SaidRegion id={said} />}
      </td>
    </tr>
  );
}

/** A connection by its name, else its client id, linking to its page; a named one shows the id too. */
function ConnectionLabel({ connection: c }: { connection: ConnectionView }) {
  const id = <code>{c.client_id}</code>;
  const href = `/portal/connections/${c.client_id}`;
  return c.name ? (
    <>
      <a href={href}>{c.name}</a> {id}
    </>
  ) : (
    <a href={href}>{id}</a>
  );
}

function ActiveConnectionForms({ clientId, said }: { clientId: string; said: string }) {
  return (
    <>
      <form data-api={`/api/portal/connections/${clientId}/rotate`} data-said-in={said} data-done={`Rotated ${clientId}: copy its new secret above.`}>
        <label for={`overlap-${clientId}`}>Overlap (seconds)</label>
        <input
          id={`overlap-${clientId}`}
          name="overlap_seconds"
          type="number"
          min="0"
          max="604800"
          value="3600"
          required
          data-expects="a number of seconds from 0 to 604800 (7 days)"
        />
        <button type="submit">Rotate {clientId}</button>
      </form>
      <form
        data-api={`/api/portal/connections/${clientId}/revoke`}
        data-said-in={said}
        data-done={`Revoked ${clientId}: its secrets no longer work.`}
        data-confirm={`Revoke connection ${clientId}? Its current and previous secrets stop working at once, and it cannot be made active again.`}
      >
        <button type="submit">Revoke {clientId}</button>
      </form>
    </>
  );
}

function RemoveConnectionForm({ clientId, workspaceId }: { clientId: string; workspaceId: string }) {
  return (
    <form
      data-api={`/api/portal/connections/${clientId}/remove`}
      data-next={`/portal/workspaces/${workspaceId}?removed=1#connection-${clientId}`}
      data-done={`Removed ${clientId}: its credentials are deleted.`}
      data-confirm={`Remove connection ${clientId} for good? Its credentials are deleted and cannot be restored.`}
      data-confirm-type={clientId}
    >
      <button type="submit">Remove {clientId}</button>
    </form>
  );
}

function CreateConnectionForm({ app }: { app: AppWithConnections }) {
  const said = `said-app-${app.id}`;
  return (
    <>
      <form
        data-api={`/api/portal/apps/${app.id}/connections`}
        class="connection-create"
        data-said-in={said}
        data-done={`Created a connection of ${app.name}: copy its secret above.`}
      >
        <label for={`kind-${app.id}`}>New connection of {app.name}</label>
        <select id={`kind-${app.id}`} name="kind">
          <option value="producer">producer</option>
          <option value="consumer">consumer</option>
        </select>{' '}
        <ConnectionDetailsFields idSuffix={`new-${app.id}`} current={{ name: '', description: '' }} /> <button type="submit">Create connection</button>
      </form>
      <SaidRegion id={said} />
    </>
  );
}

/**
 * The app's permissions as choices: a box per catalogue message type and per known system id, and a
 * field for system ids the workspace does not know yet (the portal API refuses anything else in plain
 * words). Emptying both lists asks first: the app could then publish nothing.
 */
function PermissionsForm({ app, choices }: { app: AppWithConnections; choices: PermissionChoices }) {
  const knownSystemIds = [...new Set([...choices.systemIds, ...app.permissions.system_ids])].sort();
  const said = `said-permissions-${app.id}`;
  return (
    <>
      <form
        data-api={`/api/portal/apps/${app.id}/permissions`}
        data-method="PUT"
        class="permissions"
        data-said-in={said}
        data-done={`Saved what ${app.name} may publish.`}
        data-confirm-empty={`Allow ${app.name} no system ids and no message types? It can then publish nothing until they are set again.`}
      >
        <fieldset>
          <legend>System ids {app.name} may publish as</legend>
          <PermissionBoxes app={app} name="system_ids" values={knownSystemIds} /> <label for={`system_ids-${app.id}-new`}>Other system ids</label>{' '}
          <input
            id={`system_ids-${app.id}-new`}
            name="system_ids"
            data-list=""
            size={30}
            data-expects="dotted lowercase names such as storyteller.web, separated by commas"
          />
        </fieldset>
        <fieldset>
          <legend>Message types {app.name} may publish</legend>
          <PermissionBoxes app={app} name="message_types" values={choices.messageTypes} />
        </fieldset>
        <button type="submit">Save permissions of {app.name}</button>
      </form>
      <SaidRegion id={said} />
    </>
  );
}

/** A box per value, ticked where the app's permission holds it; the script sends the ticked ones as one list (data-list). */
function PermissionBoxes({ app, name, values }: { app: AppWithConnections; name: 'system_ids' | 'message_types'; values: readonly string[] }) {
  return (
    <>
      {values.map((value, i) => {
        const id = `${name}-${app.id}-${i}`;
        return (
          <>
            {i > 0 && ' '}
            <label for={id}>
              <input type="checkbox" id={id} name={name} value={value} data-list="" checked={app.permissions[name].includes(value)} /> <code>{value}</code>
            </label>
          </>
        );
      })}
    </>
  );
}

function SecretPanel() {
  return (
    <section id="secret-panel" hidden aria-labelledby="secret-heading">
      <h2 id="secret-heading">
        New secret of <code id="secret-client-id" />
      </h2>
      <p class="warning">Copy it now: you will not see this again.</p>
      <label for="secret-value">Client secret</label> <textarea id="secret-value" class="secret" rows={2} readonly spellcheck={false} />{' '}
      <button type="button" id="copy-secret">
        Copy secret
      </button>{' '}
      <button type="button" id="secret-done">
        Done
      </button>
      <p id="secret-overlap" />
    </section>
  );
}

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]/g;
const ORGANISATION_ID = /^o[a-z2-7]{12}$/;
/** Organisations a page lists: as many as the portal's API gives by default (portal.json). */
const ORGANISATIONS_PER_PAGE = 50;

function withoutControls(text: string): string {
  return text.replace(CONTROLS, '');
}
