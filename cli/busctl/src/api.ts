// The admin API's bodies as busctl reads them (schemas/openapi/admin.json is the authority). busctl
// imports no bus package: it is a client of the HTTP contract, as any operator script would be.

export type Tier = 'minimal' | 'standard' | 'high' | 'custom';
export const TIERS: readonly Tier[] = ['minimal', 'standard', 'high', 'custom'];

export interface Quota {
  tier: Tier;
  per_second: number;
  burst: number;
  per_day: number;
}

export interface Organisation {
  id: string;
  name: string;
  kind: string;
  quota: Quota;
  created_at: string;
}

export interface Workspace {
  id: string;
  organisation_id: string;
  name: string;
  quota: Quota;
  created_at: string;
}

export interface App {
  id: string;
  workspace_id: string;
  organisation_id: string;
  name: string;
  permissions: { system_ids: string[]; message_types: string[] };
  created_at: string;
}

export interface Connection {
  client_id: string;
  app_id: string;
  workspace_id: string;
  organisation_id: string;
  kind: string;
  name: string;
  description: string;
  status: string;
  credential_version: number;
  created_at: string;
  status_changed_at: string | null;
  last_used_at: string | null;
  /** A consumer's testing settings (docs/testing-tools.md); null when none is on. */
  consumer_tools: ConsumerTools | null;
}

/** admin.json ConsumerFaults: what PUT /connections/{c}/faults takes (all 0: off). */
export interface ConsumerFaults {
  duplicate_rate: number;
  delay_ms: number;
  early_expiry_rate: number;
}

export interface ConsumerTools {
  faults: ConsumerFaults;
  max_receives: number | null;
}

/** POST /connections and POST /connections/{c}/rotate: the only answers that carry a secret. */
export interface IssuedCredential {
  client_id: string;
  client_secret: string;
  credential_version: number;
  previous_secret_usable_until?: string;
  connection: Connection;
}

export interface Registration {
  registration_id: string;
  library_version: string;
  registered_at: string;
  instance: { skill_id: string; skill_version?: string; instance_label: string };
}

/** An external identity provider (admin.json IdentityProvider). */
export interface IdentityProvider {
  id: string;
  issuer: string;
  jwks_url: string;
  audiences: string[];
  algorithms: string[];
  client_claim: string;
  clock_tolerance_seconds: number;
  created_at: string;
}

/** A provider's client bound to a connection (admin.json Binding). */
export interface Binding {
  id: string;
  provider_id: string;
  client: string;
  connection_id: string;
  created_at: string;
}

/** A page of a provider's bindings (admin.json BindingPage). */
export interface BindingList {
  bindings: Binding[];
  next_after: string | null;
}

export interface Principal {
  access_key_id: string;
  client_id: string;
  role_arn: string;
  status: 'pending' | 'verified' | 'revoked';
  created_at: string;
  verified_at: string | null;
  revoked_at: string | null;
}

export interface IssuedPrincipal {
  access_key_id: string;
  secret_access_key: string;
  principal: Principal;
}

export interface PrincipalChallenge {
  access_key_id: string;
  challenge: string;
  expires_at: string;
}

/** What a purge of a consumer's queue removed (admin.json QueuePurged). */
export interface QueuePurged {
  purged: number;
}

export interface QueueStats {
  client_id: string;
  depth: number;
  in_flight: number;
  dead_letters: number;
  oldest_age_seconds: number | null;
}

export interface DeadLetter {
  id: string;
  message_id: string;
  correlation_id: string;
  receive_count: number;
  dead_lettered_at: string;
}

export interface DeadLetterList {
  client_id: string;
  dead_letters: DeadLetter[];
  /** More are open than one answer lists (the oldest are listed). */
  truncated: boolean;
}

export interface ResolvedDeadLetter extends DeadLetter {
  resolution: 'redriven' | 'discarded';
  resolved_at: string;
}

export interface Replay {
  replay_id: string;
  client_id: string;
  since: string;
  status: 'running' | 'succeeded' | 'failed' | 'interrupted';
  scanned: number;
  replayed: number;
  skipped: number;
  requested_at: string;
  finished_at: string | null;
  error: string | null;
}

export interface QuarantinedRecord {
  id: string;
  topic: string;
  partition: number;
  offset: string;
  workspace_id: string | null;
  message_id: string | null;
  reason: string;
  quarantined_at: string;
  size_bytes: number | null;
}

export interface QuarantinePage {
  records: QuarantinedRecord[];
  next_after: string | null;
}

export interface RedriveResult {
  id: string;
  outcome: 'redriven' | 'refused' | 'not_found';
  workspace_id?: string | null;
  message_id?: string | null;
  reason?: string;
  deliveries?: number;
}

export interface RedriveAnswer {
  results: RedriveResult[];
  next_after: string | null;
}

/** GET /workspaces/{w}/messages/{message_id}: admin.json MessageTrace, declared once by the client library. */
export type { MessageTrace } from '@bus/client';

export interface ApiErrorBody {
  code: string;
  message: string;
  request_id?: string;
  /** registration.invalid only: the catalogue's validation answer (admin.json ValidationAnswer). */
  answer?: {
    valid: boolean;
    library_version: string;
    checked: 'instance' | 'list' | 'file';
    /** instance_label and skill_id are null where the instance lacks them (or they are not strings). */
    instances: Array<{ index: number; instance_label: string | null; skill_id: string | null; valid: boolean; problems: string[] }>;
    problems: string[];
  };
}
