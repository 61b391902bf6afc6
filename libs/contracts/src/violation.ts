/**
 * Spec 2.7: where a refusal comes from. The spec allows only these four values, so request-level
 * refusals (authentication, limits, routing, idempotency) use `policy`; see docs/rules.md.
 */
export type ViolationSource = 'schema' | 'conformance' | 'sequence' | 'policy';

/** Spec 2.7. The one definition: @bus/som finds them, @bus/http answers with them. */
export interface Violation {
  source: ViolationSource;
  /** A stable rule id from RULES. */
  rule: string;
  /** For people; may change; must not be parsed. */
  message: string;
  /** A JSON Pointer into the submitted message, where known. */
  path?: string;
}
