import type { ConnectionAbout, QuotaSetting } from '@bus/identity';
import { AdminRequestInvalidError } from './errors';

/**
 * The admin API's request bodies, read into what IdentityAdmin and the store take. By the time a
 * route reads one, libs/http's requestValidation has checked it against its schema in
 * schemas/openapi/admin.json (types, ranges, patterns, required and unknown fields; service.ts), so
 * the types below restate those schemas and nothing here checks a shape again. Only what a schema
 * cannot say is checked here: a custom burst at least its rate (two fields), and a replay time
 * within the archive and not in the future (the clock). Every refusal names the field; none quotes
 * a secret (requests carry none).
 */

/** #/components/schemas/QuotaSetting */
export type QuotaBody = { tier: 'minimal' | 'standard' | 'high' } | { tier: 'custom'; per_second: number; burst: number; per_day: number };

/** #/components/schemas/OrganisationCreate */
export interface OrganisationCreate {
  name: string;
  kind: 'house' | 'vendor' | 'operator';
  quota?: QuotaBody;
}

/** #/components/schemas/WorkspaceCreate */
export interface WorkspaceCreate {
  organisation_id: string;
  name: string;
  quota?: QuotaBody;
}

/** #/components/schemas/AppCreate */
export interface AppCreate {
  workspace_id: string;
  organisation_id?: string;
  name: string;
}

/** #/components/schemas/ConnectionAbout */
export interface ConnectionAboutBody {
  name?: string;
  description?: string;
}

/** #/components/schemas/ConnectionCreate */
export interface ConnectionCreate extends ConnectionAboutBody {
  app_id: string;
  kind: 'producer' | 'consumer';
}

/** #/components/schemas/Permissions */
export interface PermissionsBody {
  system_ids?: string[];
  message_types?: string[];
}

/** #/components/schemas/Rotation */
export interface RotationBody {
  overlap_seconds: number;
}

/** #/components/schemas/ReplayCreate */
export interface ReplayBody {
  since: string;
}

/** A custom quota's burst is at least its rate: a burst below it would never be reached. */
export function quotaSetting(quota: QuotaBody, field = 'quota'): QuotaSetting {
  if (quota.tier !== 'custom') return { tier: quota.tier };
  if (quota.burst < quota.per_second) {
    throw new AdminRequestInvalidError(`${field}.burst must be at least ${field}.per_second (${quota.per_second}): bursts of fewer than the rate never happen`);
  }
  return { tier: 'custom', perSecond: quota.per_second, burst: quota.burst, perDay: quota.per_day };
}

/** A connection's name and description as given (the schema bounds them); an absent one is empty. */
export function connectionAbout(b: ConnectionAboutBody): Required<ConnectionAbout> {
  return { name: b.name ?? '', description: b.description ?? '' };
}

/** Both lists replace the app's; a missing list is empty, repeats are dropped. */
export function permissions(body: PermissionsBody): { systemIds: string[]; messageTypes: string[] } {
  return { systemIds: [...new Set(body.system_ids ?? [])], messageTypes: [...new Set(body.message_types ?? [])] };
}

/** A replay start within the archive (`now - archiveMs`) and not after now. */
export function replaySince(body: ReplayBody, now: Date, archiveMs: number): Date {
  const since = new Date(body.since);
  const days = Math.round(archiveMs / 86_400_000);
  if (since.getTime() < now.getTime() - archiveMs) {
    throw new AdminRequestInvalidError(`since is before the replay archive, which keeps ${days} days in this environment`);
  }
  if (since.getTime() > now.getTime()) throw new AdminRequestInvalidError('since is in the future');
  return since;
}
