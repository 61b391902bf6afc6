import type { Response } from 'express';
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { Session } from './people-store';
import type { Grant } from './policy';

const ROLE_NAMES: Record<string, string> = { operator: 'operator', house_admin: 'house admin', vendor: 'vendor', viewer: 'viewer' };
/**
 * The script and style are the pages' only sources: no inline script, nothing from elsewhere. Forms go
 * to the portal, and (the sign-out's redirect) to the identity provider's origin when sign-in set it.
 */
export function pagePolicy(res: Response | undefined): string {
  const provider = res?.locals.providerOrigin as string | undefined;
  return `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'${provider ? ` ${provider}` : ''}; base-uri 'none'; frame-ancestors 'none'`;
}

/** What the header names a person's organisations by: their names, looked up once per page (pages.tsx). */
export type OrganisationNames = ReadonlyMap<string, string>;

/** A page of the portal in its layout, under the pages' Content-Security-Policy (every page module renders through here). */
export function sendPage(res: Response, title: string, session: Session | undefined, body: ComponentChildren, status = 200): void {
  res
    .status(status)
    .set('Content-Security-Policy', pagePolicy(res))
    .type('html')
    .send(renderPage(title, session, body, res.locals.organisationNames as OrganisationNames | undefined));
}

/**
 * The one place a page becomes HTML: its components in the layout, rendered by Preact, which escapes
 * every text and attribute value (a name a person chose is text, never markup).
 */
export function renderPage(title: string, session: Session | undefined, body: ComponentChildren, names?: OrganisationNames): string {
  return `<!doctype html>\n${renderToString(
    <Layout title={title} session={session} names={names}>
      {body}
    </Layout>,
  )}`;
}

interface LayoutProps {
  title: string;
  session: Session | undefined;
  names: OrganisationNames | undefined;
  children: ComponentChildren;
}

function Layout({ title, session, names, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} — message bus portal`}</title>
        {session && <meta name="csrf-token" content={session.csrfToken} />}
        <link rel="stylesheet" href="/portal/assets/portal.css" />
        {session && <script src="/portal/assets/portal.js" defer />}
      </head>
      <body>
        <header>
          {session ? (
            <SignedIn session={session} names={names} />
          ) : (
            <nav aria-label="Portal">
              <a href="/portal">Portal</a>
            </nav>
          )}
        </header>
        <main>
          <div id="status" role="status" aria-live="polite" />
          {children}
        </main>
        {session && <ConfirmDialog />}
      </body>
    </html>
  );
}

/** Who is signed in, with which roles of which organisations, the navigation and the way out. */
function SignedIn({ session, names }: { session: Session; names: OrganisationNames | undefined }) {
  const roles = session.grants
    .map((g) => (g.role === 'operator' ? 'operator' : `${ROLE_NAMES[g.role]} of ${names?.get(g.organisationId) ?? g.organisationId}`))
    .join(', ');
  return (
    <>
      <Navigation grants={session.grants} />
      <p class="who">
        {session.name} — {roles}
      </p>
      <form method="post" action="/portal/logout">
        <input type="hidden" name="csrf_token" value={session.csrfToken} />
        <button type="submit">Sign out</button>
      </form>
    </>
  );
}

/**
 * The navigation offers only what the person's roles may open (policy.ts decides again on the server):
 * the audit log to the operator and house admins, the message trace to all but vendors.
 */
function Navigation({ grants }: { grants: readonly Grant[] }) {
  const has = (...roles: Grant['role'][]) => grants.some((g) => roles.includes(g.role));
  return (
    <nav aria-label="Portal">
      <a href="/portal">Organisations</a>
      {has('operator', 'house_admin') && <a href="/portal/audit">Audit log</a>}
      {has('operator', 'house_admin', 'viewer') && <a href="/portal/trace">Message trace</a>}
      <a href="/portal/library">Skill library</a>
    </nav>
  );
}

/**
 * The one confirmation of a destructive change (the script fills it from the form's data-confirm and,
 * where the form asks for it, data-confirm-type: the text to type before Confirm is accepted).
 */
function ConfirmDialog() {
  return (
    <dialog id="confirm" aria-labelledby="confirm-heading">
      <form method="dialog" id="confirm-form">
        <h2 id="confirm-heading">Are you sure?</h2>
        <p id="confirm-text" />
        <p id="confirm-typing" hidden>
          <label for="confirm-typed">
            Type <code id="confirm-expected" /> to confirm
          </label>
          <br />
          <input id="confirm-typed" autocomplete="off" spellcheck={false} aria-describedby="confirm-typed-error" />
          <span id="confirm-typed-error" class="field-error" />
        </p>
        <p>
          <button type="submit" value="confirm" id="confirm-yes" class="danger">
            Confirm
          </button>{' '}
          <button type="submit" value="cancel" formnovalidate>
            Cancel
          </button>
        </p>
      </form>
    </dialog>
  );
}
