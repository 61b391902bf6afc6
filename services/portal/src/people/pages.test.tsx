import type { Request } from 'express';
import type { ConnectionView, WorkspaceView } from '../admin-store';
import { AdminNotFoundError } from '../errors';
import { portalErrorPage } from './error-page';
import { renderPage } from './layout';
import { AuditPage, OrganisationsPage, WorkspacePage } from './pages';
import type { Session } from './people-store';
import type { AppWithConnections } from './portal-data';
import { ConnectionAboutSection } from './connection-pages';
import { RefusalsSection, TraceForm } from './tools-pages';

/** Text a person or a provider chose, made to break out of an element and out of an attribute. */
const HOSTILE = `<script>alert("x")</script>'"><img src=x onerror=alert(1)>`;

const session: Session = {
  subject: 'sub-1',
  name: `Hana ${HOSTILE}`,
  grants: [{ role: 'house_admin', organisationId: 'ohouse1234567' }],
  csrfToken: 'csrf-token-1',
  expiresAt: new Date('2030-01-01T00:00:00Z'),
};
const quota = { tier: 'standard', per_second: 10, burst: 20, per_day: 1000 } as const;
const workspace: WorkspaceView = {
  id: 'wabcdefghijkl',
  organisation_id: 'ohouse1234567',
  name: `Space ${HOSTILE}`,
  quota,
  created_at: '2026-01-01T00:00:00.000Z',
};
const connection: ConnectionView = {
  client_id: 'cabcdefghijklmnop',
  app_id: 'aabcdefghijkl',
  workspace_id: workspace.id,
  organisation_id: workspace.organisation_id,
  kind: 'producer',
  status: 'active',
  name: `Feed ${HOSTILE}`,
  description: `Sends ${HOSTILE}\non two lines`,
  credential_version: 1,
  created_at: '2026-01-02T03:04:05.000Z',
  status_changed_at: null,
  last_used_at: '2026-01-03T00:00:00.000Z',
  consumer_tools: null,
};
const app: AppWithConnections = {
  id: connection.app_id,
  workspace_id: workspace.id,
  organisation_id: workspace.organisation_id,
  name: `App ${HOSTILE}`,
  permissions: { system_ids: ['storyteller.web'], message_types: [] },
  created_at: '2026-01-01T00:00:00.000Z',
  connections: [connection],
};

/** The text of HTML as a browser reads it back (the entities Preact writes). */
function unescaped(html: string): string {
  return html.replace(/&(quot|lt|gt|amp|#39);/g, (_, name: string) => ({ quot: '"', lt: '<', gt: '>', amp: '&', '#39': "'" })[name]!);
}

/** Every value of the attribute in the page, as the browser reads it. */
function attributes(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(` ${name}="([^"]*)"`, 'g'))].map((m) => unescaped(m[1]!));
}

/** No markup came from the hostile text: its tags stand in the page only as text. */
function expectNoInjectedMarkup(html: string): void {
  expect(html).not.toMatch(/<script>|<img/);
  // The one script is the portal's own, by its source (the Content-Security-Policy allows nothing inline).
  expect(html.match(/<script/g) ?? []).toHaveLength(html.includes('<script src="/portal/assets/portal.js" defer></script>') ? 1 : 0);
}

describe('pages rendered through the layout', () => {
  it('is one HTML document with the layout around the body', () => {
    const html = renderPage('Organisations', session, <p>Body</p>, new Map());
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain('<meta name="csrf-token" content="csrf-token-1"/>');
    expect(html).toContain('<main><div id="status" role="status" aria-live="polite"></div><p>Body</p></main>');
    expect(html).toContain('<dialog id="confirm" aria-labelledby="confirm-heading">');
    expect(html).toContain('<a href="/portal/audit">Audit log</a>');
  });

  it('escapes a person’s name and an organisation’s name in the header and the title', () => {
    const html = renderPage(`Workspace ${workspace.name}`, session, <p>Body</p>, new Map([['ohouse1234567', `House ${HOSTILE}`]]));
    expectNoInjectedMarkup(html);
    expect(unescaped(/<p class="who">(.*?)<\/p>/.exec(html)![1]!)).toBe(`${session.name} — house admin of House ${HOSTILE}`);
    expect(unescaped(/<title>(.*?)<\/title>/.exec(html)![1]!)).toBe(`Workspace Space ${HOSTILE} — message bus portal`);
  });

  it('escapes organisation and workspace names as text', () => {
    const organisation = { id: 'ohouse1234567', name: `House ${HOSTILE}`, kind: 'house' as const, quota, created_at: '2026-01-01T00:00:00.000Z' };
    const html = renderPage(
      'Organisations',
      session,
      <OrganisationsPage page={{ organisations: [{ ...organisation, workspaces: [{ ...workspace, accepted_today: 3 }] }], next_after: 'ohouse1234567' }} />,
    );
    expectNoInjectedMarkup(html);
    expect(unescaped(html)).toContain(`<a href="/portal/workspaces/wabcdefghijkl">Space ${HOSTILE}</a>`);
    expect(unescaped(html)).toContain(`<h2 id="org-ohouse1234567">House ${HOSTILE} <small>`);
    // More organisations follow: the page links to them.
    expect(html).toContain('<a href="/portal?after=ohouse1234567" rel="next">Next organisations</a>');
  });

  it('escapes an app’s name in the attributes the script reads and in the filter’s typed text', () => {
    const html = renderPage(
      'Workspace',
      session,
      <WorkspacePage
        workspace={workspace}
        apps={[{ app, may: { create: true, change: true, permissions: true } }]}
        filter={{ text: HOSTILE, removed: true }}
        counts={{ all: 1, matching: 1 }}
        choices={{ messageTypes: ['story.started'], systemIds: [] }}
        activity={false}
      />,
    );
    expectNoInjectedMarkup(html);
    expect(attributes(html, 'data-done')).toContain(`Saved what App ${HOSTILE} may publish.`);
    expect(attributes(html, 'data-confirm-empty')).toEqual([
      `Allow App ${HOSTILE} no system ids and no message types? It can then publish nothing until they are set again.`,
    ]);
    expect(attributes(html, 'value')).toContain(HOSTILE);
    // A named connection is listed by its name, linked, with its client id beside it.
    expect(unescaped(html)).toContain(`<a href="/portal/connections/cabcdefghijklmnop">Feed ${HOSTILE}</a> <code>cabcdefghijklmnop</code>`);
    expect(html).toContain('<p id="connection-count">Showing 1 of 1 connections.</p>');
  });

  it('escapes a message id and the violations a producer sent, and the trace form keeps the typed id as a value', () => {
    const refusals = {
      connection_id: connection.client_id,
      refusals: [
        {
          id: 1,
          mode: 'publish' as const,
          message_id: HOSTILE,
          message_type: `story.${HOSTILE}`,
          correlation_id: null,
          status: 422,
          violations: [{ source: 'schema', rule: 'schema.required', message: `must have ${HOSTILE}` }],
          violations_omitted: 0,
          refused_at: '2026-01-02T03:04:05.000Z',
          story_message_id: null,
        },
      ],
      rate_limited: { rate_limited: 0, quota_exceeded: 0, last_refused_at: null },
      next_before: null,
      workspace_id: workspace.id,
    };
    const html = renderPage(
      'Message trace',
      session,
      <>
        <TraceForm workspaces={[workspace]} asked={{ workspaceId: workspace.id, messageId: HOSTILE, problem: 'Enter the message id.' }} />
        <RefusalsSection recent={refusals} asked={{ filter: { text: HOSTILE }, typed: { rule: HOSTILE, q: HOSTILE }, problem: 'Enter a rule id.' }} />
      </>,
    );
    expectNoInjectedMarkup(html);
    expect(unescaped(html)).toContain(`<td><code>${HOSTILE}</code></td><td>story.${HOSTILE}</td>`);
    expect(unescaped(html)).toContain(`<code>schema.required</code> must have ${HOSTILE}`);
    expect(attributes(html, 'value')).toContain(HOSTILE);
    expect(html).toContain('aria-invalid="true" aria-describedby="trace-message-id-error" autofocus');
    expect(unescaped(html)).toContain(`<option value="wabcdefghijkl" selected>Space ${HOSTILE} (wabcdefghijkl)</option>`);
  });

  it('escapes a connection’s name and description on its page, as text and in the form that changes them', () => {
    const html = renderPage('Connection', session, <ConnectionAboutSection connection={connection} mayDescribe />);
    expectNoInjectedMarkup(html);
    expect(unescaped(/<h2 id="about-heading">(.*?)<\/h2>/.exec(html)![1]!)).toBe(connection.name);
    expect(unescaped(/<p class="description">(.*?)<\/p>/s.exec(html)![1]!)).toBe(connection.description);
    expect(attributes(html, 'value')).toContain(connection.name);
    expect(unescaped(/<textarea id="description-cabcdefghijklmnop"[^>]*>(.*?)<\/textarea>/s.exec(html)![1]!)).toBe(connection.description);
  });

  it('escapes the audit log’s entries and search, and shows times for the script to localise', () => {
    const entry = {
      id: '1',
      at: '2026-01-02T03:04:05.000Z',
      actor_kind: 'person' as const,
      actor: `Hana ${HOSTILE}`,
      action: 'connection.create',
      target: HOSTILE,
      organisation_id: 'ohouse1234567',
      source_address: '127.0.0.1',
      status: 201,
    };
    const html = renderPage('Audit log', session, <AuditPage entries={[entry]} search={HOSTILE} names={new Map([['ohouse1234567', HOSTILE]])} />);
    expectNoInjectedMarkup(html);
    expect(html).toContain('<time datetime="2026-01-02T03:04:05.000Z">2026-01-02T03:04:05.000Z</time>');
    expect(unescaped(html)).toContain(`<caption>The newest 100 changes you may read whose who, what or target contains “${HOSTILE}”</caption>`);
    expect(attributes(html, 'value')).toContain(HOSTILE);
  });

  it('renders an error page through the same layout, the id from the address as text', () => {
    const res = { locals: { portalSession: session, organisationNames: new Map([['ohouse1234567', 'Demo house']]) } };
    const req = { path: `/portal/workspaces/${HOSTILE}`, res } as unknown as Request;
    const page = portalErrorPage(req, new AdminNotFoundError('workspace', HOSTILE), 'req-1');
    if (!page || !('html' in page)) throw new Error('no error page');
    expectNoInjectedMarkup(page.html);
    expect(page.html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(unescaped(/<h1>(.*?)<\/h1>/.exec(page.html)![1]!)).toBe(`404: No workspace ${JSON.stringify(HOSTILE)}`);
    expect(page.html).toContain('Code <code>admin.not_found</code>, request id <code>req-1</code>.');
    expect(page.html).toContain('house admin of Demo house');
    expect(page.headers['Content-Security-Policy']).toMatch(/^default-src 'none'; script-src 'self';/);
    expect(portalErrorPage({ path: '/api/portal/me', res } as unknown as Request, new AdminNotFoundError('workspace', 'w'), 'req-2')).toBeUndefined();
  });
});
