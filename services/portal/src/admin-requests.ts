import { CUSTOM_QUOTA_CEILING } from '@bus/limits';
import type { QuotaSetting } from '@bus/identity';
import { MAX_OVERLAP_SECONDS } from '@bus/identity';
import { AdminRequestInvalidError } from './errors';

/**
 * The admin API's request bodies, read into what IdentityAdmin and the store take. Every refusal is
 * an AdminRequestInvalidError naming the field; none quotes a secret (requests carry none).
 */

const NAME_MAX = 200;
const PERMISSION_VALUE = /^[A-Za-z0-9._:/-]{1,200}$/;
const PERMISSIONS_MAX = 500;
const TIERS = ['minimal', 'standard', 'high', 'custom'] as const;
export const ORGANISATION_KINDS = ['house', 'vendor', 'operator'] as const;
export const CONNECTION_KINDS = ['producer', 'consumer'] as const;

export type JsonObject = Record<string, unknown>;

export function parseJsonObject(bytes: Buffer): JsonObject {
  let value: unknown;
  try {
    value = bytes.length === 0 ? {} : JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new AdminRequestInvalidError('The body must be a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AdminRequestInvalidError('The body must be a JSON object');
  return value as JsonObject;
}

/** Refuses fields the route does not know, so a typo never passes silently. */
export function onlyFields(body: JsonObject, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw new AdminRequestInvalidError(`Unknown field ${JSON.stringify(unknown[0]!.slice(0, 60))} (fields: ${allowed.join(', ')})`);
}

export function name(body: JsonObject, field = 'name'): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > NAME_MAX || [...value].some((ch) => ch.charCodeAt(0) < 0x20)) {
    throw new AdminRequestInvalidError(`${field} must be one line of 1 to ${NAME_MAX} characters`);
  }
  return value;
}

export function oneOfField<const T extends string>(body: JsonObject, field: string, values: readonly T[]): T {
  const value = body[field];
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw new AdminRequestInvalidError(`${field} must be one of ${values.join(', ')}`);
  }
  return value as T;
}

export function optionalId(body: JsonObject, field: string, prefix: string): string | undefined {
  return body[field] === undefined ? undefined : id(body, field, prefix);
}

export function id(body: JsonObject, field: string, prefix: string): string {
  const value = body[field];
  if (typeof value !== 'string' || !new RegExp(`^${prefix}[a-z2-7]{12}$`).test(value)) {
    throw new AdminRequestInvalidError(`${field} must be an id of the form ${prefix} followed by 12 characters of a-z and 2-7`);
  }
  return value;
}

/**
 * `{ "tier": "standard" }` or `{ "tier": "custom", "per_second": 50, "burst": 100, "per_day": 200000 }`:
 * custom limits within spec §8's ceiling (200 a second, bursts of 400, 10,000,000 a day), the burst
 * at least the rate.
 */
export function quotaSetting(value: unknown, field = 'quota'): QuotaSetting {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AdminRequestInvalidError(`${field} must be an object with a tier`);
  const q = value as JsonObject;
  const tier = oneOfField(q, 'tier', TIERS);
  if (tier !== 'custom') {
    onlyFields(q, ['tier']);
    return { tier };
  }
  onlyFields(q, ['tier', 'per_second', 'burst', 'per_day']);
  const perSecond = wholeNumber(q, 'per_second', 1, CUSTOM_QUOTA_CEILING.perSecond);
  const burst = wholeNumber(q, 'burst', perSecond, CUSTOM_QUOTA_CEILING.burst);
  const perDay = wholeNumber(q, 'per_day', 1, CUSTOM_QUOTA_CEILING.perDay);
  return { tier: 'custom', perSecond, burst, perDay };
}

export function permissions(body: JsonObject): { systemIds: string[]; messageTypes: string[] } {
  onlyFields(body, ['system_ids', 'message_types']);
  return { systemIds: permissionList(body, 'system_ids'), messageTypes: permissionList(body, 'message_types') };
}

export function overlapSeconds(body: JsonObject): number {
  onlyFields(body, ['overlap_seconds']);
  return wholeNumber(body, 'overlap_seconds', 0, MAX_OVERLAP_SECONDS);
}

/** An RFC 3339 time within the replay archive: not before `now - archiveMs`, not after now. */
export function replaySince(body: JsonObject, now: Date, archiveMs: number): Date {
  onlyFields(body, ['since']);
  const value = body.since;
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
  const since = typeof value === 'string' && rfc3339.test(value) ? new Date(value) : undefined;
  if (!since || Number.isNaN(since.getTime())) throw new AdminRequestInvalidError('since must be an RFC 3339 time, e.g. 2026-11-22T08:00:00Z');
  const days = Math.round(archiveMs / 86_400_000);
  if (since.getTime() < now.getTime() - archiveMs) {
    throw new AdminRequestInvalidError(`since is before the replay archive, which keeps ${days} days in this environment`);
  }
  if (since.getTime() > now.getTime()) throw new AdminRequestInvalidError('since is in the future');
  return since;
}

function permissionList(body: JsonObject, field: string): string[] {
  const value = body[field] ?? [];
  if (!Array.isArray(value) || value.length > PERMISSIONS_MAX || !value.every((v) => typeof v === 'string' && PERMISSION_VALUE.test(v))) {
    throw new AdminRequestInvalidError(`${field} must be a list of at most ${PERMISSIONS_MAX} values matching ${PERMISSION_VALUE}`);
  }
  return [...new Set(value as string[])];
}

function wholeNumber(body: JsonObject, field: string, min: number, max: number): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new AdminRequestInvalidError(`${field} must be a whole number from ${min} to ${max}`);
  }
  return value;
}
