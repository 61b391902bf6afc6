/**
 * docs/api.md#publish-responses: where a refusal comes from. The spec allows only these four values, so request-level
 * refusals (authentication, limits, routing, idempotency) use `policy`; see docs/rules.md.
 */
export type ViolationSource = 'schema' | 'conformance' | 'sequence' | 'policy';

/** docs/api.md#publish-responses. The one definition: @bus/som finds them, @bus/http answers with them. */
export interface Violation {
  source: ViolationSource;
  /** A stable rule id from RULES. */
  rule: string;
  /** For people; may change; must not be parsed. */
  message: string;
  /** A JSON Pointer into the submitted message, where known. */
  path?: string;
}

/**
 * Bounds on what a refusal carries, so a hostile body cannot multiply into a large answer or record:
 * a message of 30,000 unknown members is one refusal of at most `maxCount` violations (the first
 * found, in the order the checks ran) plus the number left out. Each message and path is cut to
 * `maxChars` characters (a cut one ends in "…"), and the violations kept fit in `maxBytes` of JSON
 * (UTF-8, escapes included), so the bound holds whatever characters they quote. docs/errors.md.
 */
export interface ViolationBounds {
  readonly maxCount: number;
  readonly maxChars: number;
  readonly maxBytes: number;
}

/** In every refusal answer: at most 50 violations in at most 48 KiB of JSON, so the answer stays under 64 KB. */
export const ANSWER_VIOLATION_BOUNDS: ViolationBounds = { maxCount: 50, maxChars: 500, maxBytes: 48 * 1024 };

export interface BoundedViolations {
  /** At least one: the first violation is always kept (cut to fit). */
  readonly violations: Violation[];
  /** How many violations were found beyond `violations`; 0 when none was left out. */
  readonly omitted: number;
}

export function boundViolations(found: readonly Violation[], bounds: ViolationBounds): BoundedViolations {
  const cut = (text: string) => (text.length > bounds.maxChars ? `${text.slice(0, bounds.maxChars - 1)}…` : text);
  const violations: Violation[] = [];
  let bytes = 2;
  for (const v of found) {
    if (violations.length >= bounds.maxCount) break;
    const kept: Violation = { source: v.source, rule: v.rule, message: cut(v.message), ...(v.path === undefined ? {} : { path: cut(v.path) }) };
    bytes += Buffer.byteLength(JSON.stringify(kept)) + 1;
    if (bytes > bounds.maxBytes && violations.length > 0) break;
    violations.push(kept);
  }
  return { violations, omitted: found.length - violations.length };
}
