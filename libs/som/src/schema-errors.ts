import type { ErrorObject } from 'ajv';
import { type RuleId, violation } from './rules';
import { jsonPointer, type Violation } from '@bus/contracts';

/** The rule of each JSON Schema keyword the SOM schemas use; other keywords fall back to schema.invalid. */
export const KEYWORD_RULES: ReadonlyMap<string, RuleId> = new Map<string, RuleId>([
  ['required', 'schema.required'],
  ['additionalProperties', 'schema.additional_property'],
  ['type', 'schema.type'],
  ['enum', 'schema.enum'],
  ['format', 'schema.format'],
  ['pattern', 'schema.pattern'],
  ['minLength', 'schema.min_length'],
  ['maxLength', 'schema.max_length'],
  ['minimum', 'schema.minimum'],
  ['exclusiveMinimum', 'schema.minimum'],
  ['maximum', 'schema.maximum'],
  ['exclusiveMaximum', 'schema.maximum'],
  ['minItems', 'schema.min_items'],
  ['maxItems', 'schema.max_items'],
  ['uniqueItems', 'schema.unique_items'],
]);

/**
 * One ajv error as a violation. `base` is the pointer of the validated value inside the submitted
 * message ('' for the envelope, '/payload' for a payload), so that paths point into what was sent.
 */
export function schemaViolation(error: ErrorObject, base: string): Violation {
  const at = base + error.instancePath;
  const rule = KEYWORD_RULES.get(error.keyword) ?? 'schema.invalid';
  const params = error.params as Record<string, unknown>;
  // An open union on purpose: three rules get a message of their own, every other one (of the
  // schema.* rules KEYWORD_RULES maps to) the message ajv wrote, in the default case.
  // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check -- see above
  switch (rule) {
    case 'schema.required': {
      // ajv reports the object that lacks the property; point at where the property belongs.
      const missing = String(params['missingProperty']);
      return violation(rule, `${where(at)} is missing required property '${missing}'`, jsonPointer(at, missing));
    }
    case 'schema.additional_property': {
      const extra = String(params['additionalProperty']);
      return violation(rule, `${where(at)} has property '${extra}', which the schema does not define`, jsonPointer(at, extra));
    }
    case 'schema.enum': {
      const allowed = (params['allowedValues'] as unknown[]).map((value) => JSON.stringify(value)).join(', ');
      return violation(rule, `${where(at)} must be one of ${allowed}`, at);
    }
    default:
      return violation(rule, `${where(at)} ${error.message ?? 'is invalid'}`, at);
  }
}

function where(at: string): string {
  return at === '' ? 'The message' : at;
}
