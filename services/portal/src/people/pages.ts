import type { Router } from 'express';
import type { ErrorPage } from '@bus/http';
import { PORTAL_SCRIPT, PORTAL_STYLE } from './assets';
import { activitySection } from './activity-charts';
import { connectionPageLinks } from './connection-pages';
import { MESSAGE_TYPES } from './permission-choices';
import type { AppWithConnections, PortalData } from './portal-data';
import type { PeopleStore } from './people-store';
import { allows, organisationsOf } from './policy';
import { requireSession, sessionOf } from './sign-in';
import { esc, layout, pagePolicy, saidRegion, sendPage, timeOf, type OrganisationNames } from './layout';
import { createRouter } from '@bus/http';

const PAGE_PATH = /^\/portal(\/|$)/;

/**
 * The pages' errors (and the sign-in's) as a page a person can read, with the way back; the portal
 * API (/api/portal) and every other route keep their JSON bodies. Rendered by the one error
 * middleware (libs/http), which also logs what it must.
 */
export const portalErrorPage: ErrorPage = (req, err, requestId) => {
  if (!PAGE_PATH.test(req.path)) return undefined;
  const onward = err.status === 401 ? '<p><a href="/portal/login">Sign in again</a></p>' : '<p><a href="/portal">Back to the portal</a></p>';
  const body = `<h1>${err.status}: ${esc(err.message)}</h1>
<p>Code <code>${esc(err.rule)}</code>, request id <code>${esc(requestId)}</code>.</p>
${onward}`;
  // A signed-in person keeps the navigation (a wrong link is not the end of the way).
  const locals = req.res?.locals;
  const session = req.res && err.status !== 401 ? sessionOf(req.res) : undefined;
  const html = layout(`Error ${err.status}`, session, body, locals?.organisationNames as OrganisationNames | undefined);
  return { html, headers: { 'Content-Security-Policy': pagePolicy(req.res) } };
};

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

  const page = sendPage;
  // The header names the person's organisations by name: looked up for every page (a few rows by id).
  router.use('/portal', async (req, res, next) => {
    const session = sessionOf(res);
    if (session && req.method === 'GET' && !req.path.startsWith('/assets/')) res.locals.organisationNames = await deps.data.organisationNames(session);
    next();
  });

  router.get('/portal', async (_req, res) => {
    const session = sessionOf(res);
    if (!session) {
      page(
        res,
        'Sign in',
        undefined,
        `<h1>Message bus portal</h1><p>Houses, vendors and the operator manage their workspaces, apps and connections here.</p><p><a href="/portal/login">Sign in</a></p>`,
      );
      return;
    }
    const organisations = await deps.data.organisations(session);
    const sections = organisations.map(
      (o) => `<section aria-labelledby="org-${o.id}"><h2 id="org-${o.id}">${esc(o.name)} <small>(${o.kind}, <code>${o.id}</code>)</small></h2>
<table><caption>Workspaces</caption><thead><tr><th scope="col">Workspace</th><th scope="col">Id</th><th scope="col">Tier</th><th scope="col">Accepted today</th><th scope="col">Daily quota per connection</th></tr></thead><tbody>
${o.workspaces.map((w) => `<tr><td><a href="/portal/workspaces/${w.id}">${esc(w.name)}</a></td><td><code>${w.id}</code></td><td>${w.quota.tier}</td><td>${w.accepted_today}</td><td>${w.quota.per_day}</td></tr>`).join('\n') || '<tr><td colspan="5">No workspaces</td></tr>'}
</tbody></table></section>`,
    );
    page(res, 'Organisations', session, `<h1>Organisations and workspaces</h1>${sections.join('\n') || '<p>No organisations.</p>'}`);
  });

  router.get('/portal/workspaces/:w', async (req, res) => {
    const session = requireSession(res);
    const { workspace, apps } = await deps.data.workspace(session, String(req.params.w));
    const filter = connectionFilter(req.query);
    const choices = { messageTypes: MESSAGE_TYPES, systemIds: apps.flatMap((a) => a.permissions.system_ids) };
    const body = `<h1>Workspace ${esc(workspace.name)} <small><code>${workspace.id}</code></small></h1>
<p>Tier ${workspace.quota.tier}: ${workspace.quota.per_second} a second, bursts of ${workspace.quota.burst}, ${workspace.quota.per_day} a day per connection.</p>
${secretPanel()}
${deps.data.mayReadWorkspaceActivity(session, workspace) ? activitySection({ api: `/api/portal/workspaces/${workspace.id}/activity`, of: 'this workspace', queue: true, refusals: true }) : ''}
${filterForm(workspace.id, filter, apps)}
${apps.map((a) => appSection(a, filter, { create: deps.data.mayOnApp(session, 'connection.create', workspace, a), change: deps.data.mayOnApp(session, 'connection.rotate', workspace, a), permissions: deps.data.mayOnApp(session, 'app.permissions', workspace, a) }, choices)).join('\n') || '<p>No apps you can see.</p>'}`;
    page(res, `Workspace ${workspace.name}`, session, body);
  });

  router.get('/portal/audit', async (req, res) => {
    const session = requireSession(res);
    const scope = organisationsOf(session.grants);
    const readable = scope.ids.filter((id) => allows(session.grants, 'audit.read', { organisationId: id }));
    if (!scope.all && readable.length === 0) {
      page(res, 'Audit log', session, '<h1>Audit log</h1><p>Your roles read no audit entries: the operator and the house admins read them.</p>');
      return;
    }
    // What to find, as the workspace page's connection filter: at most 100 characters, kept as typed.
    // Control characters go: Postgres cannot compare a NUL, and no entry holds one.
    const search = typeof req.query.q === 'string' ? withoutControls(req.query.q).trim().slice(0, 100) : '';
    const entries = await deps.people.auditEntries({ all: scope.all, organisationIds: readable }, 100, search || undefined);
    const names = (res.locals.organisationNames ?? new Map()) as OrganisationNames;
    const organisation = (id: string | null) => (id === null ? '' : names.has(id) ? esc(names.get(id)!) : `<code>${id}</code>`);
    page(
      res,
      'Audit log',
      session,
      `<h1>Audit log</h1>
<form method="get" action="/portal/audit"><label for="audit-q">Find (who, what or target contains)</label><input id="audit-q" name="q" maxlength="100" value="${esc(search)}"><button type="submit">Find</button>${search ? ' <a href="/portal/audit">Show all</a>' : ''}</form>
<div class="table-scroll"><table class="audit"><caption>The newest 100 changes you may read${search ? ` whose who, what or target contains “${esc(search)}”` : ''}</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Organisation</th><th scope="col">From</th><th scope="col">Status</th></tr></thead><tbody>
${entries.map((e) => `<tr><td>${timeOf(e.at)}</td><td>${esc(e.actor)}</td><td>${esc(e.action)}</td><td><code>${esc(e.target)}</code></td><td>${organisation(e.organisation_id)}</td><td>${esc(e.source_address)}</td><td>${e.status}</td></tr>`).join('\n') || `<tr><td colspan="7">${search ? 'Nothing matches' : 'Nothing yet'}</td></tr>`}
</tbody></table></div>`,
    );
  });
  return router;
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

function connectionFilter(query: Record<string, unknown>): ConnectionFilter {
  const text = typeof query.q === 'string' ? query.q.trim().slice(0, 100) : '';
  return { text, removed: query.removed === '1' };
}

/** Whether a connection is listed: the text is found, case-insensitive, in its id, kind, status or its app's name or id. */
function listed(app: AppWithConnections, c: AppWithConnections['connections'][number], filter: ConnectionFilter): boolean {
  if (c.status === 'removed' && !filter.removed) return false;
  const needle = filter.text.toLowerCase();
  return needle === '' || [c.client_id, c.kind, c.status, app.name, app.id].some((field) => field.toLowerCase().includes(needle));
}

/** A plain GET form, so the filter works without the script and its result can be linked to. */
function filterForm(workspaceId: string, filter: ConnectionFilter, apps: readonly AppWithConnections[]): string {
  const all = apps.reduce((n, a) => n + a.connections.length, 0);
  const shown = apps.reduce((n, a) => n + a.connections.filter((c) => listed(a, c, filter)).length, 0);
  return `<form method="get" action="/portal/workspaces/${workspaceId}" role="search" aria-label="Connections"><label for="connection-search">Find connections</label> <input id="connection-search" name="q" type="search" size="30" maxlength="100" value="${esc(filter.text)}">
<label for="connection-removed"><input id="connection-removed" name="removed" type="checkbox" value="1"${filter.removed ? ' checked' : ''}> Show removed connections</label> <button type="submit">Filter</button></form>
<p id="connection-count">Showing ${shown} of ${all} connections${filter.removed ? '' : ' (removed ones hidden)'}.</p>`;
}

function appSection(app: AppWithConnections, filter: ConnectionFilter, may: AppControls, choices: PermissionChoices): string {
  const rows = app.connections
    .filter((c) => listed(app, c, filter))
    .map((c) => {
      const said = `said-${c.client_id}`;
      const active =
        may.change && c.status === 'active'
          ? `<form data-api="/api/portal/connections/${c.client_id}/rotate" data-said-in="${said}" data-done="Rotated ${c.client_id}: copy its new secret above."><label for="overlap-${c.client_id}">Overlap (seconds)</label><input id="overlap-${c.client_id}" name="overlap_seconds" type="number" min="0" max="604800" value="3600" required data-expects="a number of seconds from 0 to 604800 (7 days)"><button type="submit">Rotate ${c.client_id}</button></form>
<form data-api="/api/portal/connections/${c.client_id}/revoke" data-said-in="${said}" data-done="Revoked ${c.client_id}: its secrets no longer work." data-confirm="Revoke connection ${c.client_id}? Its current and previous secrets stop working at once, and it cannot be made active again."><button type="submit">Revoke ${c.client_id}</button></form>`
          : '';
      // Removal deletes the credentials for good: offered once the connection is revoked, as a second step.
      const actions =
        may.change && c.status === 'revoked'
          ? `<form data-api="/api/portal/connections/${c.client_id}/remove" data-next="/portal/workspaces/${app.workspace_id}?removed=1#connection-${c.client_id}" data-done="Removed ${c.client_id}: its credentials are deleted." data-confirm="Remove connection ${c.client_id} for good? Its credentials are deleted and cannot be restored." data-confirm-type="${c.client_id}"><button type="submit">Remove ${c.client_id}</button></form>`
          : active;
      return `<tr id="connection-${c.client_id}"><td><a href="/portal/connections/${c.client_id}"><code>${c.client_id}</code></a>${connectionPageLinks(c)}</td><td>${c.kind}</td><td>${c.status}</td><td>${c.credential_version}</td><td>${timeOf(c.created_at)}</td><td>${actions}${may.change ? saidRegion(said) : ''}</td></tr>`;
    });
  const create = may.create
    ? `<form data-api="/api/portal/apps/${app.id}/connections" data-said-in="said-app-${app.id}" data-done="Created a connection of ${esc(app.name)}: copy its secret above."><label for="kind-${app.id}">New connection of ${esc(app.name)}</label><select id="kind-${app.id}" name="kind"><option value="producer">producer</option><option value="consumer">consumer</option></select><button type="submit">Create connection</button></form>${saidRegion(`said-app-${app.id}`)}`
    : '';
  return `<section aria-labelledby="app-${app.id}"><h2 id="app-${app.id}">App ${esc(app.name)} <small><code>${app.id}</code>, owned by <code>${app.organisation_id}</code></small></h2>
<p>May publish as system ids ${esc(app.permissions.system_ids.join(', ') || 'none')}; message types ${esc(app.permissions.message_types.join(', ') || 'none')}.</p>
${may.permissions ? permissionsForm(app, choices) : ''}
<div class="table-scroll"><table><caption>Connections of ${esc(app.name)}</caption><thead><tr><th scope="col">Client id</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Credential version</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || `<tr><td colspan="6">${app.connections.length === 0 ? 'No connections' : 'No connections match the filter'}</td></tr>`}
</tbody></table></div>${create}</section>`;
}

/**
 * The app's permissions as choices: a box per catalogue message type and per known system id, and a
 * field for system ids the workspace does not know yet (the portal API refuses anything else in plain
 * words). Emptying both lists asks first: the app could then publish nothing.
 */
function permissionsForm(app: AppWithConnections, choices: PermissionChoices): string {
  const boxes = (name: 'system_ids' | 'message_types', values: readonly string[]) =>
    values
      .map((value, i) => {
        const id = `${name}-${app.id}-${i}`;
        const checked = app.permissions[name].includes(value) ? ' checked' : '';
        return `<label for="${id}"><input type="checkbox" id="${id}" name="${name}" value="${esc(value)}" data-list${checked}> <code>${esc(value)}</code></label>`;
      })
      .join(' ');
  const knownSystemIds = [...new Set([...choices.systemIds, ...app.permissions.system_ids])].sort();
  return `<form data-api="/api/portal/apps/${app.id}/permissions" data-method="PUT" class="permissions" data-said-in="said-permissions-${app.id}" data-done="Saved what ${esc(app.name)} may publish." data-confirm-empty="Allow ${esc(app.name)} no system ids and no message types? It can then publish nothing until they are set again.">
<fieldset><legend>System ids ${esc(app.name)} may publish as</legend>${boxes('system_ids', knownSystemIds)}
<label for="system_ids-${app.id}-new">Other system ids</label> <input id="system_ids-${app.id}-new" name="system_ids" data-list size="30" data-expects="dotted lowercase names such as storyteller.web, separated by commas"></fieldset>
<fieldset><legend>Message types ${esc(app.name)} may publish</legend>${boxes('message_types', choices.messageTypes)}</fieldset>
<button type="submit">Save permissions of ${esc(app.name)}</button></form>${saidRegion(`said-permissions-${app.id}`)}`;
}

function secretPanel(): string {
  return `<section id="secret-panel" hidden aria-labelledby="secret-heading"><h2 id="secret-heading">New secret of <code id="secret-client-id"></code></h2>
<p class="warning">Copy it now: you will not see this again.</p>
<label for="secret-value">Client secret</label> <textarea id="secret-value" class="secret" rows="2" readonly spellcheck="false"></textarea>
<button type="button" id="copy-secret">Copy secret</button> <button type="button" id="secret-done">Done</button>
<p id="secret-overlap"></p></section>`;
}

// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]/g;

function withoutControls(text: string): string {
  return text.replace(CONTROLS, '');
}
