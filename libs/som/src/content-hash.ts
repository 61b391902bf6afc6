import { hash } from 'node:crypto';

/**
 * "Same content" for idempotency (the duplicate of docs/api.md#publish-responses) is the same JSON value: the hash is taken over
 * a canonical serialisation (object keys sorted, no insignificant whitespace), so a resend that a
 * client library re-serialised differently is still a duplicate. The bytes first accepted are the
 * ones stored and delivered; a duplicate publishes nothing. The gateway records this hash at
 * acceptance (accepted_messages.content_hash) and delivery falls back on it when a record's bytes are
 * not the very bytes accepted (invariant A), so both must use this one function — and its output may
 * never change by a byte: every stored hash depends on it.
 */
export function contentHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}

/**
 * The SHA-256 of the exact bytes of a message. The gateway records it at acceptance
 * (accepted_messages.body_sha256); a Kafka record whose value has it is the accepted message itself,
 * so delivery confirms it without parsing (invariant A; docs/delivery.md). Both hashes are one-shot
 * (crypto.hash): no Hash object per message, 0.4–0.7 µs less each on a 2 KB message (docs/benchmarks.md,
 * "What a publish computes").
 */
export function bodyDigest(bytes: Uint8Array): Buffer {
  return hash('sha256', bytes, 'buffer');
}

/**
 * JSON.stringify's output with every object's keys in sorted order (UTF-16 code units, as
 * Array.prototype.sort). Written as one string builder rather than map/join, and strings that need no
 * escape are quoted directly, because the gateway runs this on every publish (twice the speed of the
 * map/join form on a 2 KB message; docs/benchmarks.md, "What a publish computes"). Each piece is appended on
 * its own rather than through a template and the keys are sorted in place: the intermediate strings
 * and sort's work copies were a quarter of what the gateway allocated (docs/benchmarks.md, "What a publish
 * allocates").
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let text = '[' + canonicalJson(value[0]);
    for (let i = 1; i < value.length; i += 1) text += ',' + canonicalJson(value[i]);
    return text + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = sortedKeys(object);
  if (keys.length === 0) return '{}';
  let text = '{';
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i]!;
    if (i > 0) text += ',';
    text += quoted(key);
    text += ':';
    text += canonicalJson(object[key]);
  }
  return text + '}';
}

/** Longest key list sorted by insertion: its time grows with the square of the length (a body may hold an object of thousands of keys). */
const INSERTION_SORT_KEYS = 16;

/**
 * The object's own keys in Array.prototype.sort's order (UTF-16 code units: what `>` compares). A
 * message's objects have a handful of keys, sorted in place by insertion, where sort() copies the
 * array to sort it; a longer list goes to sort().
 */
function sortedKeys(object: Record<string, unknown>): string[] {
  const keys = Object.keys(object);
  if (keys.length > INSERTION_SORT_KEYS) return keys.sort();
  for (let i = 1; i < keys.length; i += 1) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j -= 1) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** Strings JSON.stringify may escape: a quote, a backslash, a control character or a surrogate (it escapes the lone ones). */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(text), without its cost for the usual string that needs no escape. */
function quoted(text: string): string {
  return ESCAPED.test(text) ? JSON.stringify(text) : '"' + text + '"';
}
