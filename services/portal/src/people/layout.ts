import type { Response } from 'express';
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

/** What the header names a person's organisations by: their names, looked up once per page (pages.ts). */
export type OrganisationNames = ReadonlyMap<string, string>;

/** A page of the portal in its layout, under the pages' Content-Security-Policy (every page module renders through here). */
export function sendPage(res: Response, title: string, session: Session | undefined, body: string, status = 200): void {
  res
    .status(status)
    .set('Content-Security-Policy', pagePolicy(res))
    .type('html')
    .send(layout(title, session, body, res.locals.organisationNames as OrganisationNames | undefined));
}

/**
 * The navigation offers only what the person's roles may open (policy.ts decides again on the server):
 * the audit log to the operator and house admins, the message trace to all but vendors.
 */
function navigation(grants: readonly Grant[]): string {
  const has = (...roles: Grant['role'][]) => grants.some((g) => roles.includes(g.role));
  const links = [
    '<a href="/portal">Organisations</a>',
    has('operator', 'house_admin') ? '<a href="/portal/audit">Audit log</a>' : '',
    has('operator', 'house_admin', 'viewer') ? '<a href="/portal/trace">Message trace</a>' : '',
    '<a href="/portal/library">Skill library</a>',
  ];
  return `<nav aria-label="Portal">${links.join('')}</nav>`;
}

export function layout(title: string, session: Session | undefined, body: string, names?: OrganisationNames): string {
  const roles = session?.grants
    .map((g) => (g.role === 'operator' ? 'operator' : `${ROLE_NAMES[g.role]} of ${esc(names?.get(g.organisationId) ?? g.organisationId)}`))
    .join(', ');
  const signedIn = session
    ? `${navigation(session.grants)}
<p class="who">${esc(session.name)} — ${roles}</p>
<form method="post" action="/portal/logout"><input type="hidden" name="csrf_token" value="${session.csrfToken}"><button type="submit">Sign out</button></form>`
    : '<nav aria-label="Portal"><a href="/portal">Portal</a></nav>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} — message bus portal</title>
${session ? `<meta name="csrf-token" content="${session.csrfToken}">` : ''}
<link rel="stylesheet" href="/portal/assets/portal.css">
${session ? '<script src="/portal/assets/portal.js" defer></script>' : ''}
</head><body><header>${signedIn}</header>
<main><div id="status" role="status" aria-live="polite"></div>
${body}</main>${session ? CONFIRM_DIALOG : ''}</body></html>`;
}

/**
 * The one confirmation of a destructive change (the script fills it from the form's data-confirm and,
 * where the form asks for it, data-confirm-type: the text to type before Confirm is accepted).
 */
const CONFIRM_DIALOG = `<dialog id="confirm" aria-labelledby="confirm-heading"><form method="dialog" id="confirm-form">
<h2 id="confirm-heading">Are you sure?</h2><p id="confirm-text"></p>
<p id="confirm-typing" hidden><label for="confirm-typed">Type <code id="confirm-expected"></code> to confirm</label><br><input id="confirm-typed" autocomplete="off" spellcheck="false" aria-describedby="confirm-typed-error"><span id="confirm-typed-error" class="field-error"></span></p>
<p><button type="submit" value="confirm" id="confirm-yes" class="danger">Confirm</button> <button type="submit" value="cancel" formnovalidate>Cancel</button></p></form></dialog>`;

/** A live region beside a control: the script says there what succeeded or was refused. */
export function saidRegion(id: string): string {
  return `<span class="said" role="status" id="${id}"></span>`;
}

/** A time as the API gives it (UTC); the script shows it in the person's time zone with how long ago. */
export function timeOf(at: string | Date | null | undefined): string {
  if (at === null || at === undefined || at === '') return '';
  const iso = at instanceof Date ? at.toISOString() : at;
  return `<time datetime="${esc(iso)}">${esc(iso)}</time>`;
}

/** HTML-escapes text a person or provider chose (names); ids are of a fixed alphabet already. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
