import { contentHash, parseJsonBody } from '@bus/som';

/**
 * The content hash of a Kafka record's value, computed the way the gateway computed it at acceptance
 * (the same parse, the same canonical-JSON hash), or null when the bytes are not JSON. Delivery
 * compares this, never the record's content_hash header, with the accepted row (invariant A): the
 * header travels with the bytes, so whoever could alter the bytes could alter it too.
 */
export function recordContentHash(value: Buffer): string | null {
  const parsed = parseJsonBody(value);
  return parsed.ok ? contentHash(parsed.value) : null;
}
