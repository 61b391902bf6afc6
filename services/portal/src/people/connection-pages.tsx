import type { Router, Request, Response } from 'express';
import type { SkillRegistration } from '@bus/db';
import type { PrincipalView } from '@bus/identity';
import type { ConnectionView } from '../admin-store';
import type { PrincipalOperations } from '../principal-routes';
import type { BindingOperations, BindingView, ProviderView } from '../provider-routes';
import type { RegistrationOperations } from '../registrations';
import { SaidRegion, Table, Time } from './components';
import { sendPage } from './layout';
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
export function ConnectionPageLinks({ connection }: { connection: ConnectionView }) {
  const base = `/portal/connections/${connection.client_id}`;
  return (
    <>
      <br />
      <a href={`${base}/principals`}>Principals and bindings</a>
      {connection.kind === 'consumer' && (
        <>
          {' '}
          <a href={`${base}/registrations`}>Skill registrations</a>
        </>
      )}
    </>
  );
}

/** When a connection was last used (to the minute), or that it never was. */
export function LastUsed({ connection }: { connection: ConnectionView }) {
  return connection.last_used_at ? <Time at={connection.last_used_at} /> : <>never</>;
}

/** The name and description fields of a connection's forms (create, edit); `idSuffix` keeps their ids apart on a page. */
export function ConnectionDetailsFields({ idSuffix, current }: { idSuffix: string; current: Pick<ConnectionView, 'name' | 'description'> }) {
  return (
    <>
      <label for={`name-${idSuffix}`}>Name</label>
      <input
        id={`name-${idSuffix}`}
        name="name"
        maxlength={100}
        size={30}
        value={current.name}
        data-expects="a name of one line, at most 100 characters (optional)"
      />{' '}
      <label for={`description-${idSuffix}`}>Description</label>
      <textarea
        id={`description-${idSuffix}`}
        name="description"
        maxlength={500}
        rows={2}
        cols={40}
        data-expects="a description of at most 500 characters, without tabs (optional)"
        value={current.description}
      />
    </>
  );
}

/**
 * A connection's name, description, creation and last use, with the form that changes the name and
 * description for whoever may (the script reloads the page and says it was saved; a refused value is
 * said beside its field).
 */
export function ConnectionAboutSection({ connection, mayDescribe }: { connection: ConnectionView; mayDescribe: boolean }) {
  return (
    <section aria-labelledby="about-heading">
      <h2 id="about-heading">{connection.name || 'No name yet'}</h2>
      {connection.description && <p class="description">{connection.description}</p>}
      <p>
        Created <Time at={connection.created_at} />; last used <LastUsed connection={connection} /> (a token, a publish or a receive; to the minute).
      </p>
      {mayDescribe && (
        <>
          <form
            data-api={`/api/portal/connections/${connection.client_id}/details`}
            data-method="PUT"
            data-said-in="said-details"
            data-done={`Saved the name and description of ${connection.client_id}.`}
          >
            <fieldset>
              <legend>Name and description</legend>
              <ConnectionDetailsFields idSuffix={connection.client_id} current={connection} /> <button type="submit">Save name and description</button>
            </fieldset>
          </form>
          <SaidRegion id="said-details" />
        </>
      )}
    </section>
  );
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
    sendPage(
      res,
      `Principals of ${connection.client_id}`,
      session,
      <>
        <Heading what="AWS principals and bindings" connection={connection} />
        {may('connection.principals') && <PrincipalPanels connection={connection} />}
        <PrincipalSection connection={connection} principals={principals} mayChange={may('connection.principals')} />
        <BindingSection connection={connection} bindings={bindings} providers={providers} mayChange={may('connection.bindings')} />
      </>,
    );
  });

  router.get('/portal/connections/:c/registrations', async (req, res) => {
    const { session, connection, may } = await readable(req, res);
    const registrations = await deps.registrations.list(connection.client_id);
    sendPage(
      res,
      `Skill registrations of ${connection.client_id}`,
      session,
      <RegistrationsPage connection={connection} registrations={registrations} mayChange={may('connection.registrations')} />,
    );
  });
  return router;
}

function Heading({ what, connection }: { what: string; connection: ConnectionView }) {
  return (
    <>
      <h1>
        {what} of connection <code>{connection.client_id}</code>
      </h1>
      <p>
        A {connection.kind} connection of app <code>{connection.app_id}</code>, {connection.status}.{' '}
        <a href={`/portal/workspaces/${connection.workspace_id}`}>Back to its workspace</a>
      </p>
    </>
  );
}

function RegistrationsPage({
  connection,
  registrations,
  mayChange,
}: {
  connection: ConnectionView;
  registrations: readonly SkillRegistration[];
  mayChange: boolean;
}) {
  const rows = registrations.map((r) => <RegistrationRow connection={connection} registration={r} mayChange={mayChange} />);
  return (
    <>
      <Heading what="Skill registrations" connection={connection} />
      {mayChange && <SaidRegion id="said-registrations" />}
      <Table
        scrolls
        caption="Registered skill instances"
        columns={['Registration', 'Instance label', 'Skill', 'Library version', 'Registered at', 'Actions']}
        rows={rows}
        empty="No registrations"
      />
      {connection.kind === 'consumer' && connection.status === 'active' && mayChange && <RegistrationForm connection={connection} />}
    </>
  );
}

function RegistrationRow({ connection, registration: r, mayChange }: { connection: ConnectionView; registration: SkillRegistration; mayChange: boolean }) {
  const label = String(r.instance.instance_label);
  return (
    <tr>
      <td>
        <code>{r.registration_id}</code>
      </td>
      <td>{label}</td>
      <td>{String(r.instance.skill_id)}</td>
      <td>{r.library_version}</td>
      <td>
        <Time at={r.registered_at} />
      </td>
      <td>
        {mayChange && (
          <form
            data-api={`/api/portal/connections/${connection.client_id}/registrations/${r.registration_id}/remove`}
            data-said-in="said-registrations"
            data-done={`Removed registration ${r.registration_id} (${label}).`}
            data-confirm={`Remove registration ${r.registration_id} of skill instance ${label}? The connection no longer receives for it.`}
          >
            <button type="submit">Remove {r.registration_id}</button>
          </form>
        )}
      </td>
    </tr>
  );
}

/** The panels that show, once, a new principal's secret access key and a new challenge. */
function PrincipalPanels({ connection }: { connection: ConnectionView }) {
  return (
    <>
      <section id="principal-once" class="once" hidden aria-labelledby="principal-once-heading">
        <h2 id="principal-once-heading">New AWS principal</h2>
        <p class="warning">Copy the secret access key now: you will not see this again.</p>
        <p>
          <label for="principal-key-id">Access key id</label> <input id="principal-key-id" data-answer="access_key_id" readonly />
        </p>
        <p>
          <label for="principal-secret">Secret access key</label>{' '}
          <textarea id="principal-secret" class="secret" rows={2} data-answer="secret_access_key" readonly spellcheck={false} />{' '}
          <button type="button" data-copy="principal-secret">
            Copy secret access key
          </button>{' '}
          <button type="button" data-reload="">
            Done
          </button>
        </p>
      </section>
      <section id="challenge-once" class="once" hidden aria-labelledby="challenge-once-heading">
        <h2 id="challenge-once-heading">
          Challenge for <code data-answer="access_key_id" />
        </h2>
        <p class="warning">Copy the challenge now: you will not see this again.</p>
        <p>
          <label for="challenge-value">Challenge</label>{' '}
          <textarea id="challenge-value" class="secret" rows={2} data-answer="challenge" readonly spellcheck={false} />{' '}
          <button type="button" data-copy="challenge-value">
            Copy challenge
          </button>{' '}
          <button type="button" data-reload="">
            Done
          </button>
        </p>
        <p>
          It expires at <span data-answer="expires_at" />. The principal signs (SigV4, with its key){' '}
          <code>POST /v1/tenants/{connection.workspace_id}/principals/verify</code> with body <code>{'{"challenge": "…"}'}</code>; its status then reads
          verified here.
        </p>
      </section>
    </>
  );
}

function PrincipalSection({ connection, principals, mayChange }: { connection: ConnectionView; principals: readonly PrincipalView[]; mayChange: boolean }) {
  const api = `/api/portal/connections/${connection.client_id}/principals`;
  const rows = principals.map((p) => (
    <tr>
      <td>
        <code>{p.access_key_id}</code>
      </td>
      <td>
        <code>{p.role_arn}</code>
      </td>
      <td>{p.status}</td>
      <td>
        <Time at={p.created_at} />
      </td>
      <td>
        <Time at={p.verified_at} />
      </td>
      <td>{mayChange && <PrincipalActions api={api} principal={p} connectionActive={connection.status === 'active'} />}</td>
    </tr>
  ));
  return (
    <section aria-labelledby="principals-heading">
      <h2 id="principals-heading">AWS principals</h2>
      {mayChange && <SaidRegion id="said-principals" />}
      <Table
        scrolls
        caption={`AWS principals of ${connection.client_id}`}
        columns={['Access key id', 'Role ARN', 'Status', 'Registered at', 'Verified at', 'Actions']}
        rows={rows}
        empty="No AWS principals"
      />
      {mayChange && connection.status === 'active' && (
        <form data-api={api} data-once="principal-once" data-said-in="said-principals" data-done="Registered an AWS principal.">
          <label for="role-arn">IAM role ARN</label>
          <input
            id="role-arn"
            name="role_arn"
            size={50}
            required
            maxlength={2048}
            placeholder="arn:aws:iam::123456789012:role/name"
            data-expects="an IAM role ARN such as arn:aws:iam::123456789012:role/name"
          />
          <button type="submit">Register principal</button>
        </form>
      )}
    </section>
  );
}

function PrincipalActions({ api, principal: p, connectionActive }: { api: string; principal: PrincipalView; connectionActive: boolean }) {
  const key = p.access_key_id;
  return (
    <>
      {p.status === 'pending' && connectionActive && (
        <form data-api={`${api}/${key}/challenge`} data-once="challenge-once" data-said-in="said-principals" data-done={`Issued a challenge for ${key}.`}>
          <button type="submit">Issue challenge for {key}</button>
        </form>
      )}
      {p.status !== 'revoked' && (
        <form
          data-api={`${api}/${key}/revoke`}
          data-said-in="said-principals"
          data-done={`Revoked AWS principal ${key}.`}
          data-confirm={`Revoke AWS principal ${key} (${p.role_arn})? Requests it signs are refused from now on, and it cannot be made valid again.`}
        >
          <button type="submit">Revoke {key}</button>
        </form>
      )}
      <form
        data-api={`${api}/${key}/remove`}
        data-said-in="said-principals"
        data-done={`Removed AWS principal ${key}.`}
        data-confirm={`Remove AWS principal ${key} (${p.role_arn}) for good? Its key is deleted and requests it signs are refused.`}
        data-confirm-type={key}
      >
        <button type="submit">Remove {key}</button>
      </form>
    </>
  );
}

interface BindingSectionProps {
  connection: ConnectionView;
  bindings: readonly BindingView[];
  providers: readonly ProviderView[];
  mayChange: boolean;
}

function BindingSection({ connection, bindings, providers, mayChange }: BindingSectionProps) {
  const api = `/api/portal/connections/${connection.client_id}/bindings`;
  const rows = bindings.map((b) => (
    <tr>
      <td>
        <code>{b.id}</code>
      </td>
      <td>
        <code>{b.provider_id}</code>
      </td>
      <td>
        <code>{b.client}</code>
      </td>
      <td>
        <Time at={b.created_at} />
      </td>
      <td>
        {mayChange && (
          <form
            data-api={`${api}/${b.id}/remove`}
            data-said-in="said-bindings"
            data-done={`Removed binding ${b.id}.`}
            data-confirm={`Remove binding ${b.id}? Tokens whose client claim is ${b.client} no longer act as this connection.`}
          >
            <button type="submit">Remove binding {b.id}</button>
          </form>
        )}
      </td>
    </tr>
  ));
  return (
    <section aria-labelledby="bindings-heading">
      <h2 id="bindings-heading">Identity-provider bindings</h2>
      <p>
        Tokens of a registered identity provider whose client claim has the bound value act as this connection. The providers themselves are registered by the
        operator.
      </p>
      {mayChange && <SaidRegion id="said-bindings" />}
      <Table
        scrolls
        caption={`Bindings to ${connection.client_id}`}
        columns={['Binding', 'Provider', 'Client claim value', 'Created at', 'Actions']}
        rows={rows}
        empty="No bindings"
      />
      {mayChange && connection.status === 'active' && providers.length > 0 && (
        <form data-api={api} data-said-in="said-bindings" data-done="Added the binding.">
          <label for="binding-provider">Identity provider</label>
          <select id="binding-provider" name="provider_id">
            {providers.map((p) => (
              <option value={p.id}>{p.issuer}</option>
            ))}
          </select>
          <label for="binding-client">Client claim value</label>
          <input
            id="binding-client"
            name="client"
            required
            maxlength={500}
            data-expects="the value of the provider's client claim in the client's tokens (printable characters, up to 500)"
          />
          <button type="submit">Add binding</button>
        </form>
      )}
    </section>
  );
}

/** Upload or paste a skills file, check it (the catalogue's answer, nothing saved), then save it. */
function RegistrationForm({ connection }: { connection: ConnectionView }) {
  const api = `/api/portal/connections/${connection.client_id}/registrations`;
  return (
    <section aria-labelledby="register-heading">
      <h2 id="register-heading">Register skill instances</h2>
      <p>
        <label for="skills-file">Upload a skills file</label>{' '}
        <input id="skills-file" type="file" accept=".yaml,.yml,.json,text/yaml,application/json" data-file-into="skills-text" />
      </p>
      <p>
        <label for="skills-text">Or paste it (YAML or JSON, as POST /api/skills/validate takes it)</label>
        <br />
        <textarea id="skills-text" rows={14} cols={80} spellcheck={false} />
      </p>
      <form data-api={`${api}/check`} data-body="skills-text" data-checks="check-result" data-said-in="said-register">
        <button type="submit">Check</button>
      </form>
      <form data-api={api} data-body="skills-text" data-checks="check-result" data-said-in="said-registrations" data-done="Saved the registrations.">
        <button type="submit">Save registrations</button>
      </form>
      <SaidRegion id="said-register" />
      <h3 id="check-heading">What the catalogue reports</h3>
      <ul id="check-result" aria-labelledby="check-heading" />
    </section>
  );
}
