import { bodyDigest, contentHash, parseJsonBody } from '@bus/som';

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

/**
 * A record's value as invariant A reads it: the digest of its bytes at once (a few microseconds), its
 * content hash — a strict parse and a canonical serialisation, ten times that — only when asked, which
 * is when the digest did not settle the verdict (an acceptance recorded before migration 016, bytes
 * that are not the accepted ones, or no acceptance yet).
 */
export class RecordValue {
  readonly digest: Buffer;
  #contentHash: string | null | undefined;

  constructor(readonly body: Buffer) {
    this.digest = bodyDigest(body);
  }

  /** recordContentHash of the bytes, computed once. */
  contentHash(): string | null {
    if (this.#contentHash === undefined) this.#contentHash = recordContentHash(this.body);
    return this.#contentHash;
  }
}
