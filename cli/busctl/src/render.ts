import type {
  App,
  Binding,
  Connection,
  ConsumerTools,
  DeadLetter,
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
  Quota,
  RedriveAnswer,
  Registration,
  Replay,
  ResolvedDeadLetter,
  Workspace,
} from './api';
import { formatSeconds } from './duration';

/**
 * Text from elsewhere (a name a vendor chose, a proxy's page) with control characters replaced, so
 * it cannot move the cursor or recolour the operator's terminal, and a table row stays one line.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

function cell(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '-' : printable(String(value));
}

/** Rows as columns padded to the widest cell, two spaces apart, without trailing spaces. */
function align(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n';
}

export type Column<T> = readonly [label: string, value: (item: T) => string | number | null | undefined];

/**
 * A list as a table under a header row of the field names upper-cased (the header alone when the list
 * is empty): the same names as in `show` and in the --json body.
 */
export function table<T>(columns: readonly Column<T>[], items: readonly T[]): string {
  return align([columns.map(([label]) => label.toUpperCase()), ...items.map((item) => columns.map(([, value]) => cell(value(item))))]);
}

/** One resource as "field  value" lines. */
export function fields<T>(rows: readonly Column<T>[], item: T): string {
  return align(rows.map(([label, value]) => [label, cell(value(item))]));
}

const count = (n: number): string => n.toLocaleString('en-US');

export function formatQuota(q: Quota): string {
  return `${q.tier} (${count(q.per_second)}/s, bursts of ${count(q.burst)}, ${count(q.per_day)}/day)`;
}

const list = (values: readonly string[]): string => (values.length === 0 ? '(none)' : values.join(', '));

/** A resource's fields (show) and the ones its list's table has room for. */
export interface View<T> {
  fields: readonly Column<T>[];
  listed: readonly string[];
}

export function listTable<T>(view: View<T>, items: readonly T[]): string {
  return table(
    view.fields.filter(([label]) => view.listed.includes(label)),
    items,
  );
}

export const organisationView: View<Organisation> = {
  fields: [
    ['id', (o) => o.id],
    ['name', (o) => o.name],
    ['kind', (o) => o.kind],
    ['quota', (o) => formatQuota(o.quota)],
    ['created_at', (o) => o.created_at],
  ],
  listed: ['id', 'name', 'kind', 'quota', 'created_at'],
};

export const workspaceView: View<Workspace> = {
  fields: [
    ['id', (w) => w.id],
    ['organisation_id', (w) => w.organisation_id],
    ['name', (w) => w.name],
    ['quota', (w) => formatQuota(w.quota)],
    ['created_at', (w) => w.created_at],
  ],
  listed: ['id', 'organisation_id', 'name', 'quota', 'created_at'],
};

export const appView: View<App> = {
  fields: [
    ['id', (a) => a.id],
    ['workspace_id', (a) => a.workspace_id],
    ['organisation_id', (a) => a.organisation_id],
    ['name', (a) => a.name],
    ['system_ids', (a) => list(a.permissions.system_ids)],
    ['message_types', (a) => list(a.permissions.message_types)],
    ['created_at', (a) => a.created_at],
  ],
  listed: ['id', 'workspace_id', 'organisation_id', 'name', 'created_at'],
};

/** permission show: the app's permissions alone. */
export const permissionFields: readonly Column<App>[] = [
  ['app_id', (a) => a.id],
  ['system_ids', (a) => list(a.permissions.system_ids)],
  ['message_types', (a) => list(a.permissions.message_types)],
];

export const connectionView: View<Connection> = {
  fields: [
    ['client_id', (c) => c.client_id],
    ['name', (c) => c.name],
    ['description', (c) => c.description],
    ['kind', (c) => c.kind],
    ['status', (c) => c.status],
    ['app_id', (c) => c.app_id],
    ['workspace_id', (c) => c.workspace_id],
    ['organisation_id', (c) => c.organisation_id],
    ['credential_version', (c) => c.credential_version],
    ['created_at', (c) => c.created_at],
    ['status_changed_at', (c) => c.status_changed_at],
    ['last_used_at', (c) => c.last_used_at],
    ['consumer_tools', (c) => formatConsumerTools(c.consumer_tools)],
  ],
  listed: ['client_id', 'name', 'kind', 'status', 'app_id', 'workspace_id', 'created_at', 'last_used_at'],
};

/** A consumer's testing settings on one line; null (none on) prints as '-'. */
export function formatConsumerTools(tools: ConsumerTools | null): string | null {
  if (!tools) return null;
  const { duplicate_rate, delay_ms, early_expiry_rate } = tools.faults;
  return `duplicate_rate ${duplicate_rate}, delay ${delay_ms} ms, early_expiry_rate ${early_expiry_rate}, max_receives ${tools.max_receives ?? 'off'}`;
}

/** faults set/off, dead-letter policy: the connection's testing settings after the change, a field each. */
export const consumerToolsFields: readonly Column<Connection>[] = [
  ['client_id', (c) => c.client_id],
  ['duplicate_rate', (c) => c.consumer_tools?.faults.duplicate_rate ?? 0],
  ['delay_ms', (c) => c.consumer_tools?.faults.delay_ms ?? 0],
  ['early_expiry_rate', (c) => c.consumer_tools?.faults.early_expiry_rate ?? 0],
  ['max_receives', (c) => c.consumer_tools?.max_receives ?? 'off'],
];

export const registrationColumns: readonly Column<Registration>[] = [
  ['registration_id', (r) => r.registration_id],
  ['skill_id', (r) => r.instance.skill_id],
  ['skill_version', (r) => r.instance.skill_version],
  ['instance_label', (r) => r.instance.instance_label],
  ['library_version', (r) => r.library_version],
  ['registered_at', (r) => r.registered_at],
];

export const identityProviderView: View<IdentityProvider> = {
  fields: [
    ['id', (p) => p.id],
    ['issuer', (p) => p.issuer],
    ['jwks_url', (p) => p.jwks_url],
    ['audiences', (p) => list(p.audiences)],
    ['algorithms', (p) => list(p.algorithms)],
    ['client_claim', (p) => p.client_claim],
    ['clock_tolerance_seconds', (p) => p.clock_tolerance_seconds],
    ['created_at', (p) => p.created_at],
  ],
  listed: ['id', 'issuer', 'client_claim', 'audiences', 'created_at'],
};

export const bindingView: View<Binding> = {
  fields: [
    ['id', (b) => b.id],
    ['provider_id', (b) => b.provider_id],
    ['client', (b) => b.client],
    ['connection_id', (b) => b.connection_id],
    ['created_at', (b) => b.created_at],
  ],
  listed: ['id', 'client', 'connection_id', 'created_at'],
};

/** A purge's answer: how many messages (waiting or in flight) it removed. */
export const queuePurgedFields: readonly Column<QueuePurged>[] = [['purged', (q) => count(q.purged)]];

export const queueFields: readonly Column<QueueStats>[] = [
  ['client_id', (q) => q.client_id],
  ['depth', (q) => count(q.depth)],
  ['in_flight', (q) => count(q.in_flight)],
  ['dead_letters', (q) => count(q.dead_letters)],
  ['oldest_age', (q) => (q.oldest_age_seconds === null ? null : formatSeconds(q.oldest_age_seconds))],
];

export const deadLetterColumns: readonly Column<DeadLetter>[] = [
  ['id', (d) => d.id],
  ['message_id', (d) => d.message_id],
  ['correlation_id', (d) => d.correlation_id],
  ['receive_count', (d) => d.receive_count],
  ['dead_lettered_at', (d) => d.dead_lettered_at],
];

/** dead-letter list: the open dead letters, and a line when there are more than one answer lists. */
export function renderDeadLetters(list: DeadLetterList): string {
  return (
    table(deadLetterColumns, list.dead_letters) + (list.truncated ? `More dead letters are open: the oldest ${list.dead_letters.length} are listed.\n` : '')
  );
}

export const resolvedDeadLetterFields: readonly Column<ResolvedDeadLetter>[] = [
  ...deadLetterColumns,
  ['resolution', (d) => d.resolution],
  ['resolved_at', (d) => d.resolved_at],
];

export const replayFields: readonly Column<Replay>[] = [
  ['replay_id', (r) => r.replay_id],
  ['client_id', (r) => r.client_id],
  ['since', (r) => r.since],
  ['status', (r) => r.status],
  ['scanned', (r) => count(r.scanned)],
  ['replayed', (r) => count(r.replayed)],
  ['skipped', (r) => count(r.skipped)],
  ['requested_at', (r) => r.requested_at],
  ['finished_at', (r) => r.finished_at],
  ['error', (r) => r.error],
];

export const quarantineColumns: readonly Column<QuarantinePage['records'][number]>[] = [
  ['id', (r) => r.id],
  ['reason', (r) => r.reason],
  ['workspace_id', (r) => r.workspace_id],
  ['message_id', (r) => r.message_id],
  ['size_bytes', (r) => r.size_bytes],
  ['record', (r) => `${r.topic}/${r.partition}@${r.offset}`],
  ['quarantined_at', (r) => r.quarantined_at],
];

/** quarantine list: the page, and how to ask for the next one. */
export function renderQuarantinePage(page: QuarantinePage): string {
  return table(quarantineColumns, page.records) + (page.next_after === null ? '' : `More records follow: run again with --after ${page.next_after}.\n`);
}

export const redriveColumns: readonly Column<RedriveAnswer['results'][number]>[] = [
  ['id', (r) => r.id],
  ['outcome', (r) => r.outcome],
  ['reason', (r) => r.reason],
  ['deliveries', (r) => r.deliveries],
  ['workspace_id', (r) => r.workspace_id],
  ['message_id', (r) => r.message_id],
];

export const traceFields: readonly Column<MessageTrace>[] = [
  ['message_id', (t) => t.message_id],
  ['message_type', (t) => t.message_type],
  ['correlation_id', (t) => t.correlation_id],
  ['producer', (t) => t.producer_connection_id],
  ['accepted_at', (t) => t.accepted_at],
  ['kafka', (t) => `partition ${t.kafka.partition}, offset ${t.kafka.offset}`],
];

type TraceDelivery = MessageTrace['deliveries'][number];
type TraceFault = TraceDelivery['faults'][number];

/** A delivery's dead letter: open since when, or how and when the operator resolved it. */
function deadLetterCell(d: TraceDelivery): string | null {
  if (d.dead_letter === null) return null;
  return d.dead_letter.resolution === null
    ? `open since ${d.dead_letter.dead_lettered_at}`
    : `${d.dead_letter.resolution} ${d.dead_letter.resolved_at ?? ''}`.trimEnd();
}

/** The faults injected into a delivery, counted per kind in the order they first happened. */
function faultCountsCell(d: TraceDelivery): string {
  const counts = new Map<TraceFault['kind'], number>();
  for (const f of d.faults) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${kind} ${n}`).join(', ');
}

export const traceDeliveryColumns: readonly Column<TraceDelivery>[] = [
  ['consumer', (d) => d.consumer_id],
  ['state', (d) => (d.connection_status === 'active' ? d.state : `${d.state} (connection ${d.connection_status})`)],
  ['enqueued_at', (d) => d.enqueued_at],
  ['visible_at', (d) => d.visible_at],
  ['receives', (d) => d.receive_count],
  ['nacks', (d) => d.nack_count],
  ['last_nacked_at', (d) => d.last_nacked_at],
  ['acked_at', (d) => d.acked_at],
  ['dead_letter', deadLetterCell],
  ['faults', faultCountsCell],
];

export const traceFaultColumns: readonly Column<TraceFault & { consumer_id: string }>[] = [
  ['consumer', (f) => f.consumer_id],
  ['kind', (f) => f.kind],
  ['at', (f) => f.at],
  ['detail_ms', (f) => f.detail_ms],
];

/**
 * The message's acceptance as fields, then one row per consumer connection of the workspace (a line
 * saying so when the answer left some out), then (when the Sandbox injected any) each fault injected
 * into its deliveries, the latest 20 of each.
 */
export function renderTrace(trace: MessageTrace): string {
  const faults = trace.deliveries.flatMap((d) => d.faults.map((f) => ({ ...f, consumer_id: d.consumer_id })));
  const more = trace.deliveries_truncated ? `More consumer connections hold or may get this message than the ${trace.deliveries.length} listed.\n` : '';
  const deliveries = `${fields(traceFields, trace)}\n${table(traceDeliveryColumns, trace.deliveries)}${more}`;
  return faults.length === 0 ? deliveries : `${deliveries}\n${table(traceFaultColumns, faults)}`;
}

export const SECRET_NOTE =
  'This is the only time the client secret is shown: the bus keeps only a hash. Store it now; a lost secret can only be replaced (busctl credential rotate).';

/** connection create / credential rotate: the connection, then the secret (SECRET_NOTE goes with it). */
export function renderIssued(issued: IssuedCredential): string {
  const secret: Column<IssuedCredential>[] = [
    ['client_id', (i) => i.client_id],
    ['client_secret', (i) => i.client_secret],
    ['credential_version', (i) => i.credential_version],
  ];
  if (issued.previous_secret_usable_until !== undefined) secret.push(['previous_secret_usable_until', (i) => i.previous_secret_usable_until]);
  return `${fields(connectionView.fields, issued.connection)}\n${fields(secret, issued)}`;
}

export const principalColumns: readonly Column<Principal>[] = [
  ['access_key_id', (p) => p.access_key_id],
  ['client_id', (p) => p.client_id],
  ['role_arn', (p) => p.role_arn],
  ['status', (p) => p.status],
  ['created_at', (p) => p.created_at],
  ['verified_at', (p) => p.verified_at],
  ['revoked_at', (p) => p.revoked_at],
];

export const PRINCIPAL_SECRET_NOTE =
  "This is the only time the secret access key is shown: give it to the role's holder now. The principal is pending until it signs principals/verify with a challenge (busctl principal challenge).";

export function renderIssuedPrincipal(issued: IssuedPrincipal): string {
  return `${fields(principalColumns, issued.principal)}\n${fields<IssuedPrincipal>([['secret_access_key', (i) => i.secret_access_key]], issued)}`;
}

export const challengeFields: readonly Column<PrincipalChallenge>[] = [
  ['access_key_id', (c) => c.access_key_id],
  ['challenge', (c) => c.challenge],
  ['expires_at', (c) => c.expires_at],
];
