import { checkEnvelope, checkPayload, type ClockOptions } from './conformance';
import type { SomMessage } from './message';
import { splitTolerated, violation } from './rules';
import { schemaViolation } from './schema-errors';
import { compileSomSchemas, MESSAGE_TYPES } from './schema-set';
import { parseIJson, type Violation } from '@bus/contracts';

export interface SomValidatorOptions {
  /** The bus clock, for occurred_at; tests pass a fixed one. Default: the system clock. */
  readonly now?: () => Date;
  /** occurred_at further ahead than this is reported as tolerated (conformance.occurred_at_future). Default 5 minutes. */
  readonly skewWarningMs?: number;
  /** occurred_at further ahead than this is refused (conformance.occurred_at_far_future). Default 24 hours. */
  readonly maxFutureSkewMs?: number;
}

/**
 * The outcome of schema and conformance validation. `violations` refuse the message (400); `tolerated`
 * are reported on the 202 without refusing. Sequence and policy are separate steps (applySequence,
 * checkPolicy) because they need the story state and the app's permissions.
 */
export type SomValidation =
  | { readonly ok: true; readonly message: SomMessage; readonly violations: readonly []; readonly tolerated: readonly Violation[] }
  | {
      readonly ok: false;
      /** The first MAX_SCHEMA_VIOLATIONS schema violations of each document, then the rest of the checks'. */
      readonly violations: readonly Violation[];
      readonly tolerated: readonly Violation[];
      /** Schema violations found beyond those listed (a body of thousands of unknown members). */
      readonly omitted: number;
    };

export type ParsedBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly violations: readonly Violation[] };

export interface SomValidator {
  /** Validates a parsed JSON value. */
  validate(value: unknown): SomValidation;
  /** Parses a request body (UTF-8 JSON) and validates it. */
  validateBytes(body: Uint8Array): SomValidation;
}

const FIVE_MINUTES_MS = 5 * 60_000;
/**
 * Schema violations turned into Violations per document (envelope, payload): more than any answer
 * shows (libs/contracts ANSWER_VIOLATION_BOUNDS), and the rest only counted, so a body of 25,000
 * unknown members costs what ajv costs, not 25,000 messages built and thrown away.
 */
const MAX_SCHEMA_VIOLATIONS = 100;
const ONE_DAY_MS = 24 * 60 * 60_000;

/**
 * Decodes and parses a request body under the acceptance contract (@bus/contracts' parseIJson): UTF-8 without a
 * byte order mark, JSON, and I-JSON's rules on top. Every reader of accepted bytes goes through this
 * function (the gateway before validation, delivery before enqueueing), so they cannot disagree.
 */
export function parseJsonBody(body: Uint8Array): ParsedBody {
  const parsed = parseIJson(body);
  return parsed.ok ? parsed : { ok: false, violations: [violation(`schema.${parsed.problem.code}`, parsed.problem.message, parsed.problem.path)] };
}

/** Compiles the schemas once; keep the validator for the life of the process. */
export function createSomValidator(options: SomValidatorOptions = {}): SomValidator {
  const schemas = compileSomSchemas();
  const clock: ClockOptions = {
    now: options.now ?? (() => new Date()),
    skewWarningMs: options.skewWarningMs ?? FIVE_MINUTES_MS,
    maxFutureSkewMs: options.maxFutureSkewMs ?? ONE_DAY_MS,
  };

  function validate(value: unknown): SomValidation {
    if (!isObject(value)) {
      return { ok: false, violations: [violation('schema.not_object', 'The message must be a JSON object', '')], tolerated: [], omitted: 0 };
    }
    const envelopeErrors = schemas.envelope(value) ? [] : (schemas.envelope.errors ?? []);
    const envelopeViolations = envelopeErrors.slice(0, MAX_SCHEMA_VIOLATIONS).map((error) => schemaViolation(error, ''));
    const schemaFailures = new Set(envelopeViolations.map((found) => found.path ?? ''));
    const payload = validatePayload(value, schemaFailures);
    const schemaValid = envelopeViolations.length === 0 && payload.valid;
    const found = [
      ...envelopeViolations,
      ...payload.violations,
      ...checkEnvelope(value, schemaFailures, clock),
      ...(schemaValid ? checkPayload(value as unknown as SomMessage) : []),
    ];
    const { refusing, tolerated } = splitTolerated(found);
    return refusing.length === 0
      ? { ok: true, message: value as unknown as SomMessage, violations: [], tolerated }
      : { ok: false, violations: refusing, tolerated, omitted: envelopeErrors.length - envelopeViolations.length + payload.omitted };
  }

  /** The payload against the schema of message_type; `valid` only when that schema passed. */
  function validatePayload(
    envelope: Readonly<Record<string, unknown>>,
    schemaFailures: ReadonlySet<string>,
  ): { valid: boolean; violations: Violation[]; omitted: number } {
    const messageType = envelope['message_type'];
    // A malformed or missing message_type already has its schema violation; no payload schema applies.
    if (typeof messageType !== 'string' || schemaFailures.has('/message_type')) return { valid: false, violations: [], omitted: 0 };
    const validatePayloadOf = schemas.payloads.get(messageType);
    if (validatePayloadOf === undefined) {
      const unknown = violation(
        'schema.message_type_unknown',
        `No schema for message_type ${messageType}; known: ${MESSAGE_TYPES.join(', ')}`,
        '/message_type',
      );
      return { valid: false, violations: [unknown], omitted: 0 };
    }
    // A payload that is missing or not an object already has its envelope violation.
    if (!isObject(envelope['payload'])) return { valid: false, violations: [], omitted: 0 };
    if (validatePayloadOf(envelope['payload'])) return { valid: true, violations: [], omitted: 0 };
    const errors = validatePayloadOf.errors ?? [];
    return {
      valid: false,
      violations: errors.slice(0, MAX_SCHEMA_VIOLATIONS).map((error) => schemaViolation(error, '/payload')),
      omitted: Math.max(0, errors.length - MAX_SCHEMA_VIOLATIONS),
    };
  }

  return {
    validate,
    validateBytes(body) {
      const parsed = parseJsonBody(body);
      return parsed.ok ? validate(parsed.value) : { ok: false, violations: parsed.violations, tolerated: [], omitted: 0 };
    },
  };
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
