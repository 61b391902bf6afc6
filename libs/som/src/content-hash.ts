import { createHash } from 'node:crypto';

/**
 * "Same content" for idempotency (spec 2.7's duplicate) is the same JSON value: the hash is taken over
 * a canonical serialisation (object keys sorted, no insignificant whitespace), so a resend that a
 * client library re-serialised differently is still a duplicate. The bytes first accepted are the
 * ones stored and delivered; a duplicate publishes nothing. The gateway records this hash at
 * acceptance and delivery recomputes it from each Kafka record's bytes (invariant A), so both must
 * use this one function.
 */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
