import type {
  App,
  Binding,
  BindingList,
  Connection,
  DeadLetterList,
  IdentityProvider,
  IssuedCredential,
  IssuedPrincipal,
  MessageTrace,
  Organisation,
  Principal,
  PrincipalChallenge,
  QuarantinePage,
  QueuePurged,
  QueueStats,
  RedriveAnswer,
  Registration,
  Replay,
  ResolvedDeadLetter,
  Workspace,
} from './api';
import { TIERS } from './api';
import { DURATION_FORM, durationSeconds, resolveSince } from './duration';
import { UsageError } from './errors';
import {
  appView,
  bindingView,
  challengeFields,
  connectionView,
  consumerToolsFields,
  fields,
  identityProviderView,
  listTable,
  organisationView,
  permissionFields,
  principalColumns,
  PRINCIPAL_SECRET_NOTE,
  queueFields,
  queuePurgedFields,
  redriveColumns,
  registrationColumns,
  renderIssued,
  renderIssuedPrincipal,
  renderDeadLetters,
  renderQuarantinePage,
  renderTrace,
  replayFields,
  resolvedDeadLetterFields,
  SECRET_NOTE,
  table,
  workspaceView,
  type View,
} from './render';

/** One admin API call, described as data so parsing is tested without a server. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Under /api/admin; ids already percent-encoded. */
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  /** A file sent as the body as it is (registration add), read by the I/O edge. */
  file?: { path: string; contentType: string };
}

export interface Plan {
  request: ApiRequest;
  /** The success body (null for 204) as the text busctl prints without --json. */
  render(body: unknown): string;
  /** Said alongside the output even with --json (on stderr then): the secret is shown only this once. */
  note?: string;
  /** replay: poll the replay until it is no longer running, unless --no-wait. */
  awaitReplay?: boolean;
  /** An answer that comes in pages (quarantine redrive --workspace): every page is fetched and merged into one body. */
  pages?: Paging;
  /**
   * Why the command did not do what was asked although the API answered 2xx (a replay that ended
   * other than succeeded, a record a redrive left in quarantine): said on stderr after the output,
   * and busctl exits 1.
   */
  failure?(body: unknown): string | undefined;
}

export interface Paging {
  /** The request for the page after the one answered, or undefined after the last. */
  next(body: unknown): ApiRequest | undefined;
  /** The pages' bodies as the one body busctl prints (with --json too). */
  merge(bodies: readonly unknown[]): unknown;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in help, e.g. "<app>". */
  value?: string;
  help: string;
}

/** A command's parsed arguments, read through accessors that turn absence and bad forms into usage errors. */
export interface Input {
  string(name: string): string | undefined;
  need(name: string): string;
  /** A repeatable option, each value also split on commas ("--system-id a,b --system-id c"). */
  list(name: string): string[];
  flag(name: string): boolean;
  positional(index: number): string;
  /** The positionals after the named ones (a command with `rest`), possibly none. */
  rest: readonly string[];
  now: Date;
}

export interface Command {
  path: readonly string[];
  summary: string;
  /** The arguments after the command path, for the usage line. */
  usage: string;
  options: Readonly<Record<string, OptionSpec>>;
  positionals: readonly string[];
  /** Placeholder of any number of positionals after the named ones, e.g. "<id…>"; absent: none are taken. */
  rest?: string;
  plan(input: Input): Plan;
}

const id = encodeURIComponent;

function choice<T extends string>(input: Input, name: string, allowed: readonly T[], value = input.string(name)): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not '${value}'`);
  return value as T;
}

function count(input: Input, name: string): number {
  const text = input.need(name);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--${name} must be a whole number, not '${text}'`);
  return Number(text);
}

/** A share from 0 to 1 (a fault rate); absent: 0. */
function rate(input: Input, name: string): number {
  const text = input.string(name);
  if (text === undefined) return 0;
  if (!/^(0|1)(\.0*)?$|^0?\.\d+$/.test(text)) throw new UsageError(`--${name} must be a number from 0 to 1, not '${text}'`);
  return Number(text);
}

/** The entries whose value was given: optional filters and body fields are left out, not sent empty. */
function given(pairs: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(pairs).filter((pair): pair is [string, string] => pair[1] !== undefined));
}

const CREATE_TIERS = TIERS.filter((t) => t !== 'custom');
const tierOption: OptionSpec = { type: 'string', value: CREATE_TIERS.join('|'), help: 'quota tier (default: the API decides, see docs/api.md#limits)' };

function tierQuota(input: Input): { quota?: { tier: string } } {
  const tier = choice(input, 'tier', CREATE_TIERS);
  return tier === undefined ? {} : { quota: { tier } };
}

const consumerOption: OptionSpec = { type: 'string', value: '<c>', help: 'the consumer connection (client id)' };
const connectionOption: OptionSpec = { type: 'string', value: '<c>', help: 'the connection (client id)' };
const CONNECTION_DETAILS_OPTIONS: Record<string, OptionSpec> = {
  name: { type: 'string', value: '<name>', help: 'what people call the connection: one line, at most 100 characters' },
  description: { type: 'string', value: '<text>', help: 'what the connection is for: at most 500 characters' },
};

/** `principal <verb> --connection <c> <access_key_id>`: one call on one principal of a connection. */
function principalCommand(
  verb: string,
  summary: string,
  request: { method: 'GET' | 'POST' | 'DELETE'; suffix: string },
  render: (body: unknown, key: string) => string,
  note?: string,
): Command {
  return {
    path: ['principal', verb],
    summary,
    usage: '--connection <c> <access_key_id>',
    options: { connection: connectionOption },
    positionals: ['<access_key_id>'],
    plan: (input) => {
      const key = input.positional(0);
      return {
        request: { method: request.method, path: `/connections/${id(input.need('connection'))}/principals/${id(key)}${request.suffix}` },
        render: (body) => render(body, key),
        ...(note ? { note } : {}),
      };
    },
  };
}

const SKILLS_TYPES: Record<string, string> = { '.yaml': 'application/yaml', '.yml': 'application/yaml', '.json': 'application/json' };

/** `<group> show <id>`: one resource's fields. */
function showCommand<T>(group: string, placeholder: string, collection: string, view: View<T>, summary: string): Command {
  return {
    path: [group, 'show'],
    summary,
    usage: placeholder,
    options: {},
    positionals: [placeholder],
    plan: (input) => ({
      request: { method: 'GET', path: `/${collection}/${id(input.positional(0))}` },
      render: (body) => fields(view.fields, body as T),
    }),
  };
}

/** `<group> list [--filter …]`: the collection as a table; each filter option is a query parameter. */
function listCommand<T>(
  group: string,
  collection: string,
  filters: Record<string, { query: string; value: string; help: string }>,
  view: View<T>,
  { path = collection, paged = false }: { path?: string; paged?: boolean } = {},
): Command {
  return {
    path: [group, 'list'],
    summary: `list ${collection.replace(/_/g, ' ')}`,
    usage: Object.entries(filters)
      .map(([name, filter]) => `[--${name} ${filter.value}]`)
      .join(' '),
    options: Object.fromEntries(Object.entries(filters).map(([name, { value, help }]) => [name, { type: 'string', value, help }])),
    positionals: [],
    plan: (input) => {
      const query = given(Object.fromEntries(Object.entries(filters).map(([name, filter]) => [filter.query, input.string(name)])));
      const page = (after: string | undefined): ApiRequest => ({ method: 'GET', path: `/${path}`, query: { ...query, ...given({ after }) } });
      return {
        request: page(undefined),
        ...(paged ? { pages: everyPage(collection, page) } : {}),
        render: (body) => listTable(view, itemsOf<T>(body, collection)),
      };
    },
  };
}

/** A paged list (docs/admin.md "Lists") fetched whole, page after page, and printed as one body. */
function everyPage(collection: string, page: (after: string) => ApiRequest): Paging {
  return {
    next: (body: unknown) => {
      const nextAfter = (body as { next_after: string | null }).next_after;
      return nextAfter === null ? undefined : page(nextAfter);
    },
    merge: (bodies: readonly unknown[]) => ({ [collection]: bodies.flatMap((body) => itemsOf(body, collection)), next_after: null }),
  };
}

function itemsOf<T>(body: unknown, collection: string): T[] {
  return (body as Record<string, T[]>)[collection] ?? [];
}

/** The largest injected delivery delay the admin API takes (admin.json ConsumerFaults). */
const DELAY_MS_MAX = 900_000;
/** The largest dead-letter threshold the admin API takes (admin.json DeadLetterPolicy). */
const MAX_RECEIVES_MAX = 1000;

/** The consumer's testing settings after a faults or dead-letter policy change. */
const renderConsumerTools = (body: unknown): string => fields(consumerToolsFields, body as Connection);

/** `dead-letter redrive|discard --consumer <c> <id>`: closes one open dead letter. */
function deadLetterCommand(verb: 'redrive' | 'discard', summary: string): Command {
  return {
    path: ['dead-letter', verb],
    summary,
    usage: '--consumer <c> <id>',
    options: { consumer: consumerOption },
    positionals: ['<id>'],
    plan: (input) => ({
      request: { method: 'POST', path: `/connections/${id(input.need('consumer'))}/dead-letters/${id(input.positional(0))}/${verb}` },
      render: (body) => fields(resolvedDeadLetterFields, body as ResolvedDeadLetter),
    }),
  };
}

/** The reasons delivery quarantines a record for (docs/delivery.md). */
const QUARANTINE_REASONS = ['headers.unreadable', 'value.missing', 'value.unreadable', 'acceptance.missing', 'acceptance.hash_mismatch'] as const;
/** The most record ids one redrive request takes, and the largest list page. */
const REDRIVE_IDS_MAX = 100;

export const COMMANDS: readonly Command[] = [
  {
    path: ['org', 'create'],
    summary: 'create an organisation',
    usage: '--name <name> --kind house|vendor|operator [--tier minimal|standard|high]',
    options: {
      name: { type: 'string', value: '<name>', help: 'the organisation name' },
      kind: { type: 'string', value: 'house|vendor|operator', help: 'a house publishes stories; a vendor is invited into houses' },
      tier: tierOption,
    },
    positionals: [],
    plan: (input) => ({
      request: {
        method: 'POST',
        path: '/organisations',
        json: { name: input.need('name'), kind: choice(input, 'kind', ['house', 'vendor', 'operator'], input.need('kind')), ...tierQuota(input) },
      },
      render: (body) => fields(organisationView.fields, body as Organisation),
    }),
  },
  listCommand('org', 'organisations', {}, organisationView, { paged: true }),
  showCommand('org', '<o>', 'organisations', organisationView, 'show one organisation'),
  {
    path: ['workspace', 'create'],
    summary: 'create a workspace (a tenant) in an organisation',
    usage: '--org <o> --name <name> [--tier minimal|standard|high]',
    options: {
      org: { type: 'string', value: '<o>', help: 'the organisation' },
      name: { type: 'string', value: '<name>', help: 'the workspace name' },
      tier: tierOption,
    },
    positionals: [],
    plan: (input) => ({
      request: { method: 'POST', path: '/workspaces', json: { organisation_id: input.need('org'), name: input.need('name'), ...tierQuota(input) } },
      render: (body) => fields(workspaceView.fields, body as Workspace),
    }),
  },
  listCommand('workspace', 'workspaces', { org: { query: 'organisation_id', value: '<o>', help: "only this organisation's workspaces" } }, workspaceView, {
    paged: true,
  }),
  showCommand('workspace', '<w>', 'workspaces', workspaceView, 'show one workspace'),
  {
    path: ['app', 'create'],
    summary: 'create an app in a workspace',
    usage: '--workspace <w> --name <name> [--org <vendor o>]',
    options: {
      workspace: { type: 'string', value: '<w>', help: 'the workspace' },
      name: { type: 'string', value: '<name>', help: 'the app name' },
      org: { type: 'string', value: '<o>', help: "a vendor organisation owning the app (its connections get the vendor's quota)" },
    },
    positionals: [],
    plan: (input) => ({
      request: {
        method: 'POST',
        path: '/apps',
        json: { workspace_id: input.need('workspace'), name: input.need('name'), ...given({ organisation_id: input.string('org') }) },
      },
      render: (body) => fields(appView.fields, body as App),
    }),
  },
  listCommand('app', 'apps', { workspace: { query: 'workspace_id', value: '<w>', help: "only this workspace's apps" } }, appView, { paged: true }),
  showCommand('app', '<a>', 'apps', appView, 'show one app, with its permissions'),
  {
    path: ['connection', 'create'],
    summary: 'issue a connection (a client id and secret) for an app; the secret is shown once',
    usage: '--app <a> --kind producer|consumer [--name <name>] [--description <text>]',
    options: {
      app: { type: 'string', value: '<a>', help: 'the app' },
      kind: { type: 'string', value: 'producer|consumer', help: 'a producer publishes; a consumer reads its queue' },
      ...CONNECTION_DETAILS_OPTIONS,
    },
    positionals: [],
    plan: (input) => ({
      request: {
        method: 'POST',
        path: '/connections',
        json: {
          app_id: input.need('app'),
          kind: choice(input, 'kind', ['producer', 'consumer'], input.need('kind')),
          ...given({ name: input.string('name'), description: input.string('description') }),
        },
      },
      render: (body) => renderIssued(body as IssuedCredential),
      note: SECRET_NOTE,
    }),
  },
  listCommand(
    'connection',
    'connections',
    {
      workspace: { query: 'workspace_id', value: '<w>', help: "only this workspace's connections" },
      app: { query: 'app_id', value: '<a>', help: "only this app's connections" },
    },
    connectionView,
    { paged: true },
  ),
  showCommand('connection', '<c>', 'connections', connectionView, 'show one connection'),
  {
    path: ['connection', 'describe'],
    summary: "replace a connection's name and description (one left out is emptied)",
    usage: '<c> [--name <name>] [--description <text>]',
    options: CONNECTION_DETAILS_OPTIONS,
    positionals: ['<c>'],
    plan: (input) => ({
      request: {
        method: 'PUT',
        path: `/connections/${id(input.positional(0))}/details`,
        json: given({ name: input.string('name'), description: input.string('description') }),
      },
      render: (body) => fields(connectionView.fields, body as Connection),
    }),
  },
  {
    path: ['connection', 'remove'],
    summary: 'remove a connection for good (its credential stops working)',
    usage: '<c>',
    options: {},
    positionals: ['<c>'],
    plan: (input) => ({
      request: { method: 'DELETE', path: `/connections/${id(input.positional(0))}` },
      render: () => `Removed connection ${input.positional(0)}.\n`,
    }),
  },
  {
    path: ['credential', 'rotate'],
    summary: "issue a connection's next secret; the previous one keeps obtaining tokens for the overlap",
    usage: '<c> --overlap <duration>',
    options: { overlap: { type: 'string', value: '<duration>', help: `how long the previous secret still obtains tokens: ${DURATION_FORM}` } },
    positionals: ['<c>'],
    plan: (input) => {
      const overlap = input.need('overlap');
      const seconds = durationSeconds(overlap);
      if (seconds === undefined) throw new UsageError(`--overlap must be ${DURATION_FORM}, not '${overlap}'`);
      return {
        request: { method: 'POST', path: `/connections/${id(input.positional(0))}/rotate`, json: { overlap_seconds: seconds } },
        render: (body) => renderIssued(body as IssuedCredential),
        note: SECRET_NOTE,
      };
    },
  },
  {
    path: ['credential', 'revoke'],
    summary: "revoke a connection's credential (its tokens and secret stop working)",
    usage: '<c>',
    options: {},
    positionals: ['<c>'],
    plan: (input) => ({
      request: { method: 'POST', path: `/connections/${id(input.positional(0))}/revoke` },
      render: (body) => fields(connectionView.fields, body as Connection),
    }),
  },
  {
    path: ['permission', 'set'],
    summary: "replace an app's permissions: the system ids and message types it may publish",
    usage: '--app <a> --system-id <id>[,<id>…] --message-type <type>[,<type>…]',
    options: {
      app: { type: 'string', value: '<a>', help: 'the app' },
      'system-id': { type: 'string', multiple: true, value: '<id>', help: 'an allowed system_id (repeat, or separate with commas)' },
      'message-type': { type: 'string', multiple: true, value: '<type>', help: 'an allowed message_type (repeat, or separate with commas)' },
    },
    positionals: [],
    plan: (input) => ({
      request: {
        method: 'PUT',
        path: `/apps/${id(input.need('app'))}/permissions`,
        json: { system_ids: input.list('system-id'), message_types: input.list('message-type') },
      },
      render: (body) => fields(permissionFields, body as App),
    }),
  },
  {
    path: ['permission', 'show'],
    summary: "show an app's permissions",
    usage: '--app <a>',
    options: { app: { type: 'string', value: '<a>', help: 'the app' } },
    positionals: [],
    plan: (input) => ({
      request: { method: 'GET', path: `/apps/${id(input.need('app'))}` },
      render: (body) => fields(permissionFields, body as App),
    }),
  },
  {
    path: ['tier', 'set'],
    summary: "set a workspace's or an organisation's quota; existing connections follow within seconds",
    usage: '(--workspace <w> | --org <o>) minimal|standard|high|custom [--per-second <n> --burst <n> --per-day <n>]',
    options: {
      workspace: { type: 'string', value: '<w>', help: 'the workspace' },
      org: { type: 'string', value: '<o>', help: "the organisation (a vendor's quota applies to its connections in every house)" },
      'per-second': { type: 'string', value: '<n>', help: 'custom only: requests a second (up to 200)' },
      burst: { type: 'string', value: '<n>', help: 'custom only: bursts of (up to 400)' },
      'per-day': { type: 'string', value: '<n>', help: 'custom only: requests a day (up to 10,000,000)' },
    },
    positionals: ['minimal|standard|high|custom'],
    plan: (input) => {
      const workspace = input.string('workspace');
      const org = input.string('org');
      if ((workspace === undefined) === (org === undefined)) throw new UsageError('give exactly one of --workspace and --org');
      const tier = input.positional(0);
      if (!(TIERS as readonly string[]).includes(tier)) throw new UsageError(`the tier must be one of ${TIERS.join(', ')}, not '${tier}'`);
      const limits = ['per-second', 'burst', 'per-day'];
      if (tier !== 'custom' && limits.some((name) => input.string(name) !== undefined)) {
        throw new UsageError('--per-second, --burst and --per-day go with the custom tier only');
      }
      const quota =
        tier === 'custom' ? { tier, per_second: count(input, 'per-second'), burst: count(input, 'burst'), per_day: count(input, 'per-day') } : { tier };
      return workspace !== undefined
        ? {
            request: { method: 'PUT', path: `/workspaces/${id(workspace)}/quota`, json: quota },
            render: (body) => fields(workspaceView.fields, body as Workspace),
          }
        : {
            request: { method: 'PUT', path: `/organisations/${id(org as string)}/quota`, json: quota },
            render: (body) => fields(organisationView.fields, body as Organisation),
          };
    },
  },
  {
    path: ['idp', 'create'],
    summary: 'register an external identity provider: its tokens then publish for the clients bound to a connection',
    usage: '--issuer <iss> --jwks-url <https url> --audience <aud>… --client-claim azp|client_id|sub [--algorithms <alg,…>] [--clock-tolerance <seconds>]',
    options: {
      issuer: { type: 'string', value: '<iss>', help: "the issuer exactly as the provider's tokens carry it in iss" },
      'jwks-url': { type: 'string', value: '<url>', help: "the provider's key set (https)" },
      audience: { type: 'string', multiple: true, value: '<aud>', help: 'an audience the tokens may carry (repeatable)' },
      'client-claim': { type: 'string', value: 'azp|client_id|sub', help: "the claim naming the provider's client" },
      algorithms: { type: 'string', value: '<alg,…>', help: 'the accepted algorithms, comma-separated (default RS256,PS256,ES256,EdDSA; never HS* or none)' },
      'clock-tolerance': { type: 'string', value: '<seconds>', help: 'clock skew allowed on exp, nbf and iat (default 60)' },
    },
    positionals: [],
    plan: (input) => {
      const algorithms = input
        .string('algorithms')
        ?.split(',')
        .map((a) => a.trim());
      return {
        request: {
          method: 'POST',
          path: '/identity-providers',
          json: {
            issuer: input.need('issuer'),
            jwks_url: input.need('jwks-url'),
            audiences: input.list('audience'),
            client_claim: choice(input, 'client-claim', ['azp', 'client_id', 'sub'], input.need('client-claim')),
            ...(algorithms === undefined ? {} : { algorithms }),
            ...(input.string('clock-tolerance') === undefined ? {} : { clock_tolerance_seconds: count(input, 'clock-tolerance') }),
          },
        },
        render: (body) => fields(identityProviderView.fields, body as IdentityProvider),
      };
    },
  },
  listCommand('idp', 'identity_providers', {}, identityProviderView, { path: 'identity-providers' }),
  showCommand('idp', '<i>', 'identity-providers', identityProviderView, 'show one identity provider'),
  {
    path: ['idp', 'remove'],
    summary: 'remove an identity provider and its bindings (its tokens are refused within seconds)',
    usage: '<i>',
    options: {},
    positionals: ['<i>'],
    plan: (input) => ({
      request: { method: 'DELETE', path: `/identity-providers/${id(input.positional(0))}` },
      render: () => `Removed identity provider ${input.positional(0)}.\n`,
    }),
  },
  {
    path: ['binding', 'add'],
    summary: "bind an identity provider's client to a connection",
    usage: '--idp <i> --client <value> --connection <c>',
    options: {
      idp: { type: 'string', value: '<i>', help: 'the identity provider' },
      client: { type: 'string', value: '<value>', help: "the value of the provider's client claim in the client's tokens" },
      connection: { type: 'string', value: '<c>', help: 'the connection its tokens act as (a producer, to publish)' },
    },
    positionals: [],
    plan: (input) => ({
      request: {
        method: 'POST',
        path: `/identity-providers/${id(input.need('idp'))}/bindings`,
        json: { client: input.need('client'), connection_id: input.need('connection') },
      },
      render: (body) => fields(bindingView.fields, body as Binding),
    }),
  },
  {
    path: ['binding', 'list'],
    summary: "list an identity provider's bindings",
    usage: '--idp <i>',
    options: { idp: { type: 'string', value: '<i>', help: 'the identity provider' } },
    positionals: [],
    plan: (input) => {
      const page = (after: string | undefined): ApiRequest => ({
        method: 'GET',
        path: `/identity-providers/${id(input.need('idp'))}/bindings`,
        query: given({ after }),
      });
      return { request: page(undefined), pages: everyPage('bindings', page), render: (body) => listTable(bindingView, (body as BindingList).bindings) };
    },
  },
  {
    path: ['binding', 'remove'],
    summary: "remove a binding (the client's tokens are refused within seconds)",
    usage: '--idp <i> <binding_id>',
    options: { idp: { type: 'string', value: '<i>', help: 'the identity provider' } },
    positionals: ['<binding_id>'],
    plan: (input) => ({
      request: { method: 'DELETE', path: `/identity-providers/${id(input.need('idp'))}/bindings/${id(input.positional(0))}` },
      render: () => `Removed binding ${input.positional(0)}.\n`,
    }),
  },
  {
    path: ['registration', 'add'],
    summary: "register a consumer's skill instances from a skills file, checked as the catalogue checks them",
    usage: '--consumer <c> -f <skills.yaml|skills.json>',
    options: {
      consumer: consumerOption,
      file: { type: 'string', short: 'f', value: '<file>', help: 'a .yaml/.yml or .json file, in any input form POST /api/skills/validate takes' },
    },
    positionals: [],
    plan: (input) => {
      const file = input.need('file');
      const contentType = SKILLS_TYPES[/\.[^./\\]*$/.exec(file.toLowerCase())?.[0] ?? ''];
      if (contentType === undefined) throw new UsageError(`--file must end in .yaml, .yml or .json, not '${file}'`);
      return {
        request: { method: 'POST', path: `/connections/${id(input.need('consumer'))}/registrations`, file: { path: file, contentType } },
        render: (body) => table(registrationColumns, (body as { registrations: Registration[] }).registrations),
      };
    },
  },
  {
    path: ['registration', 'list'],
    summary: "list a consumer's skill registrations",
    usage: '--consumer <c>',
    options: { consumer: consumerOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'GET', path: `/connections/${id(input.need('consumer'))}/registrations` },
      render: (body) => table(registrationColumns, (body as { registrations: Registration[] }).registrations),
    }),
  },
  {
    path: ['registration', 'remove'],
    summary: 'remove one skill registration from a consumer',
    usage: '--consumer <c> <registration_id>',
    options: { consumer: consumerOption },
    positionals: ['<registration_id>'],
    plan: (input) => {
      const consumer = input.need('consumer');
      const registration = input.positional(0);
      return {
        request: { method: 'DELETE', path: `/connections/${id(consumer)}/registrations/${id(registration)}` },
        render: () => `Removed registration ${registration} from ${consumer}.\n`,
      };
    },
  },
  {
    path: ['replay'],
    summary: "replay a consumer's messages from the archive into its queue",
    usage: '--consumer <c> --since <duration|RFC 3339 time> [--no-wait]',
    options: {
      consumer: consumerOption,
      since: { type: 'string', value: '<when>', help: `replay what was published since then: ${DURATION_FORM} ago, or an RFC 3339 time` },
      'no-wait': { type: 'boolean', help: 'print the replay as started instead of waiting (each second) until it ends' },
    },
    positionals: [],
    plan: (input) => {
      const sinceText = input.need('since');
      const since = resolveSince(sinceText, input.now);
      if (since === undefined) throw new UsageError(`--since must be ${DURATION_FORM}, or an RFC 3339 time such as 2026-11-22T06:00:00Z, not '${sinceText}'`);
      const wait = !input.flag('no-wait');
      return {
        request: { method: 'POST', path: `/connections/${id(input.need('consumer'))}/replays`, json: { since } },
        render: (body) => fields(replayFields, body as Replay),
        awaitReplay: wait,
        ...(wait ? { failure: replayFailure } : {}),
      };
    },
  },
  {
    path: ['queue', 'stats'],
    summary: "show a consumer's queue: depth, messages in flight, oldest message's age",
    usage: '--consumer <c>',
    options: { consumer: consumerOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'GET', path: `/connections/${id(input.need('consumer'))}/queue` },
      render: (body) => fields(queueFields, body as QueueStats),
    }),
  },
  {
    path: ['queue', 'purge'],
    summary: "remove every message waiting or in flight on a consumer's queue (its receipt handles stale); its dead letters stay",
    usage: '--consumer <c>',
    options: { consumer: consumerOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'POST', path: `/connections/${id(input.need('consumer'))}/purge` },
      render: (body) => fields(queuePurgedFields, body as QueuePurged),
    }),
  },
  {
    path: ['faults', 'set'],
    summary: "inject faults into a consumer's deliveries (Sandbox only); the rates and delay not given are 0",
    usage: '--consumer <c> [--duplicate-rate <0-1>] [--delay-ms <n>] [--early-expiry-rate <0-1>]',
    options: {
      consumer: consumerOption,
      'duplicate-rate': { type: 'string', value: '<0-1>', help: 'share of acks answered done but lost: the message comes back once as a duplicate' },
      'delay-ms': { type: 'string', value: '<n>', help: `milliseconds a message waits after it was enqueued before it is receivable (up to ${DELAY_MS_MAX})` },
      'early-expiry-rate': { type: 'string', value: '<0-1>', help: 'share of leases that end at half their visibility timeout' },
    },
    positionals: [],
    plan: (input) => {
      const delayMs = input.string('delay-ms') === undefined ? 0 : count(input, 'delay-ms');
      if (delayMs > DELAY_MS_MAX) throw new UsageError(`--delay-ms must be at most ${DELAY_MS_MAX}, not ${delayMs}`);
      const faults = { duplicate_rate: rate(input, 'duplicate-rate'), delay_ms: delayMs, early_expiry_rate: rate(input, 'early-expiry-rate') };
      if (faults.duplicate_rate === 0 && faults.delay_ms === 0 && faults.early_expiry_rate === 0)
        throw new UsageError('give a fault above 0 (busctl faults off turns them off)');
      return { request: { method: 'PUT', path: `/connections/${id(input.need('consumer'))}/faults`, json: faults }, render: renderConsumerTools };
    },
  },
  {
    path: ['faults', 'off'],
    summary: "stop injecting faults into a consumer's deliveries",
    usage: '--consumer <c>',
    options: { consumer: consumerOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'PUT', path: `/connections/${id(input.need('consumer'))}/faults`, json: { duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 0 } },
      render: renderConsumerTools,
    }),
  },
  {
    path: ['dead-letter', 'policy'],
    summary: "set after how many receives a consumer's message is dead-lettered, or turn dead-lettering off",
    usage: '--consumer <c> (--max-receives <n> | --off)',
    options: {
      consumer: consumerOption,
      'max-receives': {
        type: 'string',
        value: '<n>',
        help: `receives (1 to ${MAX_RECEIVES_MAX}) after which a message is dead-lettered instead of handed out again`,
      },
      off: { type: 'boolean', help: 'no threshold: messages are handed out however often (open dead letters stay until redriven or discarded)' },
    },
    positionals: [],
    plan: (input) => {
      const off = input.flag('off');
      if (off === (input.string('max-receives') !== undefined)) throw new UsageError('give --max-receives or --off, one of the two');
      const maxReceives = off ? null : count(input, 'max-receives');
      if (maxReceives !== null && (maxReceives < 1 || maxReceives > MAX_RECEIVES_MAX))
        throw new UsageError(`--max-receives must be from 1 to ${MAX_RECEIVES_MAX}, not ${maxReceives}`);
      return {
        request: { method: 'PUT', path: `/connections/${id(input.need('consumer'))}/dead-letter-policy`, json: { max_receives: maxReceives } },
        render: renderConsumerTools,
      };
    },
  },
  {
    path: ['dead-letter', 'list'],
    summary: "list a consumer's open dead letters, oldest first (each holds back its correlation id's later messages)",
    usage: '--consumer <c>',
    options: { consumer: consumerOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'GET', path: `/connections/${id(input.need('consumer'))}/dead-letters` },
      render: (body) => renderDeadLetters(body as DeadLetterList),
    }),
  },
  deadLetterCommand('redrive', 'make a dead letter receivable again, first of its correlation id, its receive count back to 0'),
  deadLetterCommand('discard', "settle a dead letter as if acked, so its correlation id's later messages flow"),
  {
    path: ['message', 'trace'],
    summary: "where an accepted message is: its acceptance and Kafka offset, and each consumer connection's copy (never the body)",
    usage: '<w> <message_id>',
    options: {},
    positionals: ['<w>', '<message_id>'],
    plan: (input) => ({
      request: { method: 'GET', path: `/workspaces/${id(input.positional(0))}/messages/${id(input.positional(1))}` },
      render: (body) => renderTrace(body as MessageTrace),
    }),
  },
  {
    path: ['quarantine', 'list'],
    summary: 'list Kafka records delivery refused to enqueue (metadata only), oldest first, a page at a time',
    usage: `[--workspace <w>] [--reason <reason>] [--limit <n>] [--after <id>]`,
    options: {
      workspace: { type: 'string', value: '<w>', help: "only this workspace's records" },
      reason: { type: 'string', value: '<reason>', help: `only those quarantined for this reason: ${QUARANTINE_REASONS.join(', ')}` },
      limit: { type: 'string', value: '<n>', help: `records per page, 1 to ${REDRIVE_IDS_MAX} (default 50)` },
      after: { type: 'string', value: '<id>', help: 'the page after this record id (as the previous page says)' },
    },
    positionals: [],
    plan: (input) => {
      const limit = input.string('limit') === undefined ? undefined : String(count(input, 'limit'));
      return {
        request: {
          method: 'GET',
          path: '/quarantine',
          query: given({ workspace_id: input.string('workspace'), reason: choice(input, 'reason', QUARANTINE_REASONS), limit, after: input.string('after') }),
        },
        render: (body) => renderQuarantinePage(body as QuarantinePage),
      };
    },
  },
  {
    path: ['quarantine', 'redrive'],
    summary: 'check quarantined records against their acceptance again: enqueue those now accepted, say why the others stay',
    usage: '(<id>… | --workspace <w> [--after <id>])',
    options: {
      workspace: { type: 'string', value: '<w>', help: 'every quarantined record of this workspace, oldest first (each page of 100 in turn)' },
      after: { type: 'string', value: '<id>', help: 'with --workspace: start after this record id' },
    },
    positionals: [],
    rest: '<id…>',
    plan: (input) => {
      const workspace = input.string('workspace');
      const after = input.string('after');
      if ((workspace === undefined) === (input.rest.length === 0)) throw new UsageError('give record ids or --workspace, one of the two');
      const render = (body: unknown) => table(redriveColumns, (body as RedriveAnswer).results);
      if (workspace === undefined) {
        if (after !== undefined) throw new UsageError('--after goes with --workspace');
        if (input.rest.length > REDRIVE_IDS_MAX) throw new UsageError(`at most ${REDRIVE_IDS_MAX} ids at a time (--workspace takes all of a workspace)`);
        return { request: { method: 'POST', path: '/quarantine/redrive', json: { ids: input.rest } }, render, failure: redriveFailure };
      }
      const page = (from: string | undefined): ApiRequest => ({
        method: 'POST',
        path: '/quarantine/redrive',
        json: { workspace_id: workspace, ...given({ after: from }) },
      });
      return {
        request: page(after),
        pages: {
          next: (body) => {
            const nextAfter = (body as RedriveAnswer).next_after;
            return nextAfter === null ? undefined : page(nextAfter);
          },
          merge: (bodies) => ({ results: bodies.flatMap((b) => (b as RedriveAnswer).results), next_after: null }),
        },
        render,
        failure: redriveFailure,
      };
    },
  },
  {
    path: ['principal', 'add'],
    summary: 'register an AWS role ARN on a connection; prints its access key id and secret access key (shown once)',
    usage: '--connection <c> --role-arn <arn>',
    options: { connection: connectionOption, 'role-arn': { type: 'string', value: '<arn>', help: 'the IAM role ARN, arn:aws:iam::<account>:role/<name>' } },
    positionals: [],
    plan: (input) => ({
      request: { method: 'POST', path: `/connections/${id(input.need('connection'))}/principals`, json: { role_arn: input.need('role-arn') } },
      render: (body) => renderIssuedPrincipal(body as IssuedPrincipal),
      note: PRINCIPAL_SECRET_NOTE,
    }),
  },
  {
    path: ['principal', 'list'],
    summary: "list a connection's AWS principals (never their secrets)",
    usage: '--connection <c>',
    options: { connection: connectionOption },
    positionals: [],
    plan: (input) => ({
      request: { method: 'GET', path: `/connections/${id(input.need('connection'))}/principals` },
      render: (body) => table(principalColumns, (body as { principals: Principal[] }).principals),
    }),
  },
  principalCommand('show', 'show one AWS principal', { method: 'GET', suffix: '' }, (body) => fields(principalColumns, body as Principal)),
  principalCommand(
    'challenge',
    'issue a one-time challenge (10 minutes) that the pending principal signs back to principals/verify',
    { method: 'POST', suffix: '/challenge' },
    (body) => fields(challengeFields, body as PrincipalChallenge),
    'The challenge is shown only this once: give it to the role\'s holder, who signs POST /v1/tenants/{t}/principals/verify with {"challenge": …} (docs/auth.md).',
  ),
  principalCommand('revoke', 'revoke an AWS principal for good (its signatures stop working)', { method: 'POST', suffix: '/revoke' }, (body) =>
    fields(principalColumns, body as Principal),
  ),
  principalCommand('remove', 'remove an AWS principal and its secret', { method: 'DELETE', suffix: '' }, (_body, key) => `Removed AWS principal ${key}.\n`),
];

function replayFailure(body: unknown): string | undefined {
  const replay = body as Replay;
  return replay.status === 'succeeded' ? undefined : `replay ${replay.replay_id} ended ${replay.status}${replay.error ? `: ${replay.error}` : ''}`;
}

function redriveFailure(body: unknown): string | undefined {
  const { results } = body as RedriveAnswer;
  const stayed = results.filter((r) => r.outcome !== 'redriven').length;
  return stayed === 0
    ? undefined
    : `${stayed} of ${results.length} records were not redriven (refused: still quarantined, for the reason shown; not_found: not in quarantine)`;
}

/** The first word of each command, with what it is about, for `busctl --help` and group help. */
export const GROUPS: Readonly<Record<string, string>> = {
  org: 'organisations: houses, vendors and the operator',
  workspace: "workspaces: an organisation's tenants, each with a quota",
  app: 'apps: what publishes or consumes in a workspace',
  connection: 'connections: one app, one credential, producer or consumer',
  credential: "a connection's secret: rotate with an overlap, revoke",
  permission: 'the system ids and message types an app may publish',
  tier: 'quota tiers and custom limits',
  idp: 'external identity providers whose tokens publish for bound clients',
  binding: "an identity provider's client bound to a connection",
  registration: "a consumer's skill registrations",
  principal: 'AWS principals of a connection: role ARN, access key, challenge, revoke',
  replay: "replay a consumer's messages from the archive",
  queue: "a consumer's queue",
  faults: "Sandbox fault injection into a consumer's deliveries: lost acks, delay, leases cut short",
  'dead-letter': "a consumer's dead letters: the threshold, list, redrive, discard",
  message: 'follow an accepted message through delivery',
  quarantine: 'Kafka records delivery refused to enqueue: list them, redrive those accepted since',
};
