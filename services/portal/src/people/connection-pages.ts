import type { Router, Request, Response } from 'express';
import type { PrincipalView } from '@bus/identity';
import type { ConnectionView } from '../admin-store';
import type { PrincipalOperations } from '../principal-routes';
import type { BindingOperations, BindingView, ProviderView } from '../provider-routes';
import type { RegistrationOperations } from '../registrations';
import { esc, saidRegion, sendPage, timeOf } from './layout';
import type { PortalData } from './portal-data';
import { allows, type Action } from './policy';
import { requireSession } from './sign-in';
import { createRouter } from '@bus/http';

export interface ConnectionPagesDeps {
  data: PortalData;
  principals: PrincipalOperations;
  bindings: BindingOperations;
  registrations: RegistrationOperations;
}

/** The links of a connection's row on the workspace page to its own pages. */
export function connectionPageLinks(connection: ConnectionView): string {
  const base = `/portal/connections/${connection.client_id}`;
  const registrations = connection.kind === 'consumer' ? ` <a href="${base}/registrations">Skill registrations</a>` : '';
  return `<br><a href="${base}/principals">Principals and bindings</a>${registrations}`;
}

/** The name and description fields of a connection's forms (create, edit); `key` keeps their ids apart on a page. */
export function connectionDetailsFields(key: string, current: Pick<ConnectionView, 'name' | 'description'>): string {
  return `<label for="name-${key}">Name</label><input id="name-${key}" name="name" maxlength="100" size="30" value="${esc(current.name)}" data-expects="a name of one line, at most 100 characters (optional)">
<label for="description-${key}">Description</label><textarea id="description-${key}" name="description" maxlength="500" rows="2" cols="40" data-expects="a description of at most 500 characters, without tabs (optional)">${esc(current.description)}</textarea>`;
}

/**
 * A connection's name, description, creation and last use, with the form that changes the name and
 * description for whoever may (the script reloads the page and says it was saved; a refused value is
 * said beside its field).
 */
export function connectionAboutSection(connection: ConnectionView, mayDescribe: boolean): string {
  const described = connection.description ? `<p class="description">${esc(connection.description)}</p>` : '';
  const used = connection.last_used_at ? timeOf(connection.last_used_at) : 'never';
  const form = mayDescribe
    ? `<form data-api="/api/portal/connections/${connection.client_id}/details" data-method="PUT" data-said-in="said-details" data-done="Saved the name and description of ${connection.client_id}."><fieldset><legend>Name and description</legend>
${connectionDetailsFields(connection.client_id, connection)}
<button type="submit">Save name and description</button></fieldset></form>${saidRegion('said-details')}`
    : '';
  return `<section aria-labelledby="about-heading"><h2 id="about-heading">${connection.name ? esc(connection.name) : 'No name yet'}</h2>${described}
<p>Created ${timeOf(connection.created_at)}; last used ${used} (a token, a publish or a receive; to the minute).</p>
${form}</section>`;
}

/**
 * A connection's pages (docs/portal.md): its AWS principals and identity-provider bindings, and a
 * consumer's skill registrations. Read from the admin API's own operations, shown to whoever may read
 * the connection, with the change controls only for those policy.ts lets change it (the portal API
 * refuses the others anyway: connection-api.ts).
 */
export function connectionPages(deps: ConnectionPagesDeps): Router {
  const router = createRouter();
  /** The person, the connection and what they may change on it; a 404/403 page when there is none to read. */
  const readable = async (req: Request, res: Response) => {
    const session = requireSession(res);
    const clientId = String(req.params.c);
    const { connection, target } = await deps.data.authorisedConnection(session, 'connection.read', clientId);
    const may = (action: Action) => allows(session.grants, action, target);
    return { session, connection, may };
  };

  router.get('/portal/connections/:c/principals', async (req, res) => {
    const { session, connection, may } = await readable(req, res);
    const [principals, bindings, providers] = await Promise.all([
      deps.principals.list(connection.client_id),
      deps.bindings.ofConnection(connection.client_id),
      may('connection.bindings') ? deps.bindings.providers() : Promise.resolve([]),
    ]);
    const body = `${heading('AWS principals and bindings', connection)}
${may('connection.principals') ? principalPanels(connection) : ''}
${principalSection(connection, principals, may('connection.principals'))}
${bindingSection(connection, bindings, providers, may('connection.bindings'))}`;
    sendPage(res, `Principals of ${connection.client_id}`, session, body);
  });

  router.get('/portal/connections/:c/registrations', async (req, res) => {
    const { session, connection, may } = await readable(req, res);
    const registrations = await deps.registrations.list(connection.client_id);
    const rows = registrations.map((r) => {
      const label = esc(String(r.instance.instance_label));
      const remove = may('connection.registrations')
        ? `<form data-api="/api/portal/connections/${connection.client_id}/registrations/${r.registration_id}/remove" data-said-in="said-registrations" data-done="Removed registration ${r.registration_id} (${label})." data-confirm="Remove registration ${r.registration_id} of skill instance ${label}? The connection no longer receives for it."><button type="submit">Remove ${r.registration_id}</button></form>`
        : '';
      return `<tr><td><code>${r.registration_id}</code></td><td>${label}</td><td>${esc(String(r.instance.skill_id))}</td><td>${esc(r.library_version)}</td><td>${timeOf(r.registered_at)}</td><td>${remove}</td></tr>`;
    });
    const body = `${heading('Skill registrations', connection)}
${may('connection.registrations') ? saidRegion('said-registrations') : ''}
<div class="table-scroll"><table><caption>Registered skill instances</caption><thead><tr><th scope="col">Registration</th><th scope="col">Instance label</th><th scope="col">Skill</th><th scope="col">Library version</th><th scope="col">Registered at</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="6">No registrations</td></tr>'}
</tbody></table></div>
${connection.kind === 'consumer' && connection.status === 'active' && may('connection.registrations') ? registrationForm(connection) : ''}`;
    sendPage(res, `Skill registrations of ${connection.client_id}`, session, body);
  });
  return router;
}

function heading(what: string, connection: ConnectionView): string {
  return `<h1>${what} of connection <code>${connection.client_id}</code></h1>
<p>A ${connection.kind} connection of app <code>${connection.app_id}</code>, ${connection.status}. <a href="/portal/workspaces/${connection.workspace_id}">Back to its workspace</a></p>`;
}

/** The panels that show, once, a new principal's secret access key and a new challenge. */
function principalPanels(connection: ConnectionView): string {
  return `<section id="principal-once" class="once" hidden aria-labelledby="principal-once-heading"><h2 id="principal-once-heading">New AWS principal</h2>
<p class="warning">Copy the secret access key now: you will not see this again.</p>
<p><label for="principal-key-id">Access key id</label> <input id="principal-key-id" data-answer="access_key_id" readonly></p>
<p><label for="principal-secret">Secret access key</label> <textarea id="principal-secret" class="secret" rows="2" data-answer="secret_access_key" readonly spellcheck="false"></textarea>
<button type="button" data-copy="principal-secret">Copy secret access key</button> <button type="button" data-reload>Done</button></p></section>
<section id="challenge-once" class="once" hidden aria-labelledby="challenge-once-heading"><h2 id="challenge-once-heading">Challenge for <code data-answer="access_key_id"></code></h2>
<p class="warning">Copy the challenge now: you will not see this again.</p>
<p><label for="challenge-value">Challenge</label> <textarea id="challenge-value" class="secret" rows="2" data-answer="challenge" readonly spellcheck="false"></textarea>
<button type="button" data-copy="challenge-value">Copy challenge</button> <button type="button" data-reload>Done</button></p>
<p>It expires at <span data-answer="expires_at"></span>. The principal signs (SigV4, with its key) <code>POST /v1/tenants/${connection.workspace_id}/principals/verify</code> with body <code>{"challenge": "…"}</code>; its status then reads verified here.</p></section>`;
}

function principalSection(connection: ConnectionView, principals: readonly PrincipalView[], mayChange: boolean): string {
  const api = `/api/portal/connections/${connection.client_id}/principals`;
  const rows = principals.map((p) => {
    const actions = mayChange
      ? [
          p.status === 'pending' && connection.status === 'active'
            ? `<form data-api="${api}/${p.access_key_id}/challenge" data-once="challenge-once" data-said-in="said-principals" data-done="Issued a challenge for ${p.access_key_id}."><button type="submit">Issue challenge for ${p.access_key_id}</button></form>`
            : '',
          p.status !== 'revoked'
            ? `<form data-api="${api}/${p.access_key_id}/revoke" data-said-in="said-principals" data-done="Revoked AWS principal ${p.access_key_id}." data-confirm="Revoke AWS principal ${p.access_key_id} (${esc(p.role_arn)})? Requests it signs are refused from now on, and it cannot be made valid again."><button type="submit">Revoke ${p.access_key_id}</button></form>`
            : '',
          `<form data-api="${api}/${p.access_key_id}/remove" data-said-in="said-principals" data-done="Removed AWS principal ${p.access_key_id}." data-confirm="Remove AWS principal ${p.access_key_id} (${esc(p.role_arn)}) for good? Its key is deleted and requests it signs are refused." data-confirm-type="${p.access_key_id}"><button type="submit">Remove ${p.access_key_id}</button></form>`,
        ].join('')
      : '';
    return `<tr><td><code>${p.access_key_id}</code></td><td><code>${esc(p.role_arn)}</code></td><td>${p.status}</td><td>${timeOf(p.created_at)}</td><td>${timeOf(p.verified_at)}</td><td>${actions}</td></tr>`;
  });
  const register =
    mayChange && connection.status === 'active'
      ? `<form data-api="${api}" data-once="principal-once" data-said-in="said-principals" data-done="Registered an AWS principal."><label for="role-arn">IAM role ARN</label><input id="role-arn" name="role_arn" size="50" required maxlength="2048" placeholder="arn:aws:iam::123456789012:role/name" data-expects="an IAM role ARN such as arn:aws:iam::123456789012:role/name"><button type="submit">Register principal</button></form>`
      : '';
  return `<section aria-labelledby="principals-heading"><h2 id="principals-heading">AWS principals</h2>${mayChange ? saidRegion('said-principals') : ''}
<div class="table-scroll"><table><caption>AWS principals of ${connection.client_id}</caption><thead><tr><th scope="col">Access key id</th><th scope="col">Role ARN</th><th scope="col">Status</th><th scope="col">Registered at</th><th scope="col">Verified at</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="6">No AWS principals</td></tr>'}
</tbody></table></div>${register}</section>`;
}

function bindingSection(connection: ConnectionView, bindings: readonly BindingView[], providers: readonly ProviderView[], mayChange: boolean): string {
  const api = `/api/portal/connections/${connection.client_id}/bindings`;
  const rows = bindings.map((b) => {
    const remove = mayChange
      ? `<form data-api="${api}/${b.id}/remove" data-said-in="said-bindings" data-done="Removed binding ${b.id}." data-confirm="Remove binding ${b.id}? Tokens whose client claim is ${esc(b.client)} no longer act as this connection."><button type="submit">Remove binding ${b.id}</button></form>`
      : '';
    return `<tr><td><code>${b.id}</code></td><td><code>${b.provider_id}</code></td><td><code>${esc(b.client)}</code></td><td>${timeOf(b.created_at)}</td><td>${remove}</td></tr>`;
  });
  const add =
    mayChange && connection.status === 'active' && providers.length > 0
      ? `<form data-api="${api}" data-said-in="said-bindings" data-done="Added the binding."><label for="binding-provider">Identity provider</label><select id="binding-provider" name="provider_id">${providers.map((p) => `<option value="${p.id}">${esc(p.issuer)}</option>`).join('')}</select><label for="binding-client">Client claim value</label><input id="binding-client" name="client" required maxlength="500" data-expects="the value of the provider's client claim in the client's tokens (printable characters, up to 500)"><button type="submit">Add binding</button></form>`
      : '';
  return `<section aria-labelledby="bindings-heading"><h2 id="bindings-heading">Identity-provider bindings</h2>
<p>Tokens of a registered identity provider whose client claim has the bound value act as this connection. The providers themselves are registered by the operator.</p>${mayChange ? saidRegion('said-bindings') : ''}
<div class="table-scroll"><table><caption>Bindings to ${connection.client_id}</caption><thead><tr><th scope="col">Binding</th><th scope="col">Provider</th><th scope="col">Client claim value</th><th scope="col">Created at</th><th scope="col">Actions</th></tr></thead><tbody>
${rows.join('\n') || '<tr><td colspan="5">No bindings</td></tr>'}
</tbody></table></div>${add}</section>`;
}

/** Upload or paste a skills file, check it (the catalogue's answer, nothing saved), then save it. */
function registrationForm(connection: ConnectionView): string {
  const api = `/api/portal/connections/${connection.client_id}/registrations`;
  return `<section aria-labelledby="register-heading"><h2 id="register-heading">Register skill instances</h2>
<p><label for="skills-file">Upload a skills file</label> <input id="skills-file" type="file" accept=".yaml,.yml,.json,text/yaml,application/json" data-file-into="skills-text"></p>
<p><label for="skills-text">Or paste it (YAML or JSON, as POST /api/skills/validate takes it)</label><br><textarea id="skills-text" rows="14" cols="80" spellcheck="false"></textarea></p>
<form data-api="${api}/check" data-body="skills-text" data-checks="check-result" data-said-in="said-register"><button type="submit">Check</button></form>
<form data-api="${api}" data-body="skills-text" data-checks="check-result" data-said-in="said-registrations" data-done="Saved the registrations."><button type="submit">Save registrations</button></form>${saidRegion('said-register')}
<h3 id="check-heading">What the catalogue reports</h3>
<ul id="check-result" aria-labelledby="check-heading"></ul></section>`;
}
