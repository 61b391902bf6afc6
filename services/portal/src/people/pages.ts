import type { Router, Response } from 'express';
import type { ErrorPage } from '@bus/http';
import { PORTAL_SCRIPT, PORTAL_STYLE } from './assets';
import { connectionPageLinks } from './connection-pages';
import type { AppWithConnections, PortalData } from './portal-data';
import type { PeopleStore, Session } from './people-store';
import { allows, organisationsOf } from './policy';
import { sessionOf } from './sign-in';
import { TOOL_LINKS } from './tool-links';
import { createRouter } from '@bus/http';

const ROLE_NAMES: Record<string, string> = { operator: 'operator', house_admin: 'house admin', vendor: 'vendor', viewer: 'viewer' };
/** The script and style are the pages' only sources: no inline script, nothing from elsewhere. */
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
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
  return { html: layout(`Error ${err.status}`, undefined, body), headers: { 'Content-Security-Policy': PAGE_POLICY } };
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
    const session = sessionOf(res);
    if (!session) return res.redirect(303, '/portal');
    const { workspace, apps } = await deps.data.workspace(session, String(req.params.w));
    const body = `<h1>Workspace ${esc(workspace.name)} <small><code>${workspace.id}</code></small></h1>
<p>Tier ${workspace.quota.tier}: ${workspace.quota.per_second} a second, bursts of ${workspace.quota.burst}, ${workspace.quota.per_day} a day per connection.</p>
${secretPanel()}
${apps.map((a) => appSection(a, { create: deps.data.mayOnApp(session, 'connection.create', workspace, a), change: deps.data.mayOnApp(session, 'connection.rotate', workspace, a), permissions: deps.data.mayOnApp(session, 'app.permissions', workspace, a) })).join('\n') || '<p>No apps you can see.</p>'}`;
    page(res, `Workspace ${workspace.name}`, session, body);
  });

  router.get('/portal/audit', async (_req, res) => {
    const session = sessionOf(res);
    if (!session) return res.redirect(303, '/portal');
    const scope = organisationsOf(session.grants);
    const readable = scope.ids.filter((id) => allows(session.grants, 'audit.read', { organisationId: id }));
    const entries = await deps.people.auditEntries({ all: scope.all, organisationIds: readable }, 100);
    page(
      res,
      'Audit log',
      session,
      `<h1>Audit log</h1>
<table><caption>The newest 100 changes you may read</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Organisation</th><th scope="col">From</th><th scope="col">Status</th></tr></thead><tbody>
${entries.map((e) => `<tr><td>${e.at}</td><td>${esc(e.actor)}</td><td>${esc(e.action)}</td><td><code>${esc(e.target)}</code></td><td>${e.organisation_id ?? ''}</td><td>${esc(e.source_address)}</td><td>${e.status}</td></tr>`).join('\n') || '<tr><td colspan="7">Nothing yet</td></tr>'}
</tbody></table>`,
    );
  });
  return router;
}

/** A page of the portal in its layout, under the pages' Content-Security-Policy (every page module renders through here). */
export function sendPage(res: Response, title: string, session: Session | undefined, body: string): void {
  res
    .set('Content-Security-Policy', PAGE_POLICY)
    .type('html')
    .send(layout(title, session, body));
}

/** What the person may do to an app, as policy.ts decides: the section offers only those controls. */
interface AppControls {
  create: boolean;
  change: boolean;
  permissions: boolean;
}

function appSection(app: AppWithConnections, may: AppControls): string {
  const rows = app.connections.map((c) => {
    const active =
      may.change && c.status === 'active'
        ? `<form data-api="/api/portal/connections/${c.client_id}/rotate"><label for="overlap-${c.client_id}">Overlap (seconds)</label><input id="overlap-${c.client_id}" name="overlap_seconds" type="number" min="0" max="604800" value="3600"><button type="submit">Rotate ${c.client_id}</button></form>
<form data-api="/api/portal/connections/${c.client_id}/revoke"><button type="submit">Revoke ${c.client_id}</button></form>`
        : '';
    // Removal deletes the credentials for good: offered once the connection is revoked, as a second step.
    const actions =
      may.change && c.status === 'revoked'
        ? `<form data-api="/api/portal/connections/${c.client_id}/remove"><button type="submit">Remove ${c.client_id}</button></form>`
        : active;
    return `<tr><td><a href="/portal/connections/${c.client_id}"><code>${c.client_id}</code></a>${connectionPageLinks(c)}</td><td>${c.kind}</td><td>${c.status}</td><td>${c.credential_version}</td><td>${actions}</td></tr>`;
  });
  const create = may.create
    ? `<form data-api="/api/portal/apps/${app.id}/connections"><label for="kind-${app.id}">New connection of ${esc(app.name)}</label><select id="kind-${app.id}" name="kind"><option value="producer">producer</option><option value="consumer">consumer</option></select><button type="submit">Create connection</button></form>`
    : '';
  return `<section aria-labelledby="app-${app.id}"><h2 id="app-${app.id}">App ${esc(app.name)} <small><code>${app.id}</code>, owned by <code>${app.organisation_id}</code></small></h2>
<p>May publish as system ids ${esc(app.permissions.system_ids.join(', ') || 'none')}; message types ${esc(app.permissions.message_types.join(', ') || 'none')}.</p>
${may.permissions ? permissionsForm(app) : ''}
<table><caption>Connections of ${esc(app.name)}</caption><thead><tr><th scope="col">Client id</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Credential version</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="5">No connections</td></tr>'}
</tbody></table>${create}</section>`;
}

/** Both lists as text, comma-separated; the script sends them as the lists the API takes. */
function permissionsForm(app: AppWithConnections): string {
  const field = (name: 'system_ids' | 'message_types', label: string) =>
    `<label for="${name}-${app.id}">${label}</label><input id="${name}-${app.id}" name="${name}" data-list size="40" value="${esc(app.permissions[name].join(', '))}">`;
  return `<form data-api="/api/portal/apps/${app.id}/permissions" data-method="PUT" class="permissions">${field('system_ids', 'System ids')}${field('message_types', 'Message types')}<button type="submit">Save permissions of ${esc(app.name)}</button></form>`;
}

function secretPanel(): string {
  return `<section id="secret-panel" hidden aria-labelledby="secret-heading"><h2 id="secret-heading">New secret of <code id="secret-client-id"></code></h2>
<p class="warning">Copy it now: you will not see this again.</p>
<label for="secret-value">Client secret</label> <input id="secret-value" readonly>
<button type="button" id="copy-secret">Copy secret</button> <button type="button" id="secret-done">Done</button>
<p id="secret-overlap"></p></section>`;
}

function layout(title: string, session: Session | undefined, body: string): string {
  const signedIn = session
    ? `<nav aria-label="Portal"><a href="/portal">Organisations</a><a href="/portal/audit">Audit log</a>${TOOL_LINKS}</nav>
<p>${esc(session.name)} — ${session.grants.map((g) => (g.role === 'operator' ? 'operator' : `${ROLE_NAMES[g.role]} of ${g.organisationId}`)).join(', ')}</p>
<form method="post" action="/portal/logout"><input type="hidden" name="csrf_token" value="${session.csrfToken}"><button type="submit">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — message bus portal</title>
${session ? `<meta name="csrf-token" content="${session.csrfToken}">` : ''}
<link rel="stylesheet" href="/portal/assets/portal.css">
${session ? '<script src="/portal/assets/portal.js" defer></script>' : ''}
</head><body><header>${signedIn}</header>
<main><div id="status" role="status" aria-live="polite"></div>
${body}</main></body></html>`;
}

/** HTML-escapes text a person or provider chose (names); ids are of a fixed alphabet already. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
