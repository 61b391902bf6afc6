/**
 * The rule catalogue: every rule id the bus can answer with, its source, the HTTP status of a response
 * that reports it and whether it is tolerated (reported on a 202 under `tolerated`, not refusing).
 * Code never decides toleration with ifs: it looks the rule up here. docs/rules.md and GET /v1/rules are
 * generated from this table.
 */
import { SOM_VERSION } from './message';
import type { Violation, ViolationSource } from '@bus/contracts';

export interface RuleDefinition {
  readonly source: ViolationSource;
  /** The status of a response that reports the rule: 202 for tolerated rules, which never refuse. */
  readonly status: number;
  readonly tolerated: boolean;
  readonly description: string;
}

const BAD_REQUEST = 400;
const FORBIDDEN = 403;
const CONFLICT = 409;
const ACCEPTED = 202;

function refusing(source: ViolationSource, status: number, description: string): RuleDefinition {
  return { source, status, tolerated: false, description };
}

function tolerated(source: ViolationSource, description: string): RuleDefinition {
  return { source, status: ACCEPTED, tolerated: true, description };
}

export const RULES = {
  // The body as a whole.
  'schema.json_invalid': refusing('schema', BAD_REQUEST, 'The body is not JSON encoded as UTF-8.'),
  // I-JSON (RFC 7493): what every reader of the accepted bytes reads the same way (docs/gateway.md).
  'schema.json_bom': refusing(
    'schema',
    BAD_REQUEST,
    'The body starts with a UTF-8 byte order mark; JSON text must not (RFC 8259 §8.1), and readers that keep it cannot parse the message.',
  ),
  'schema.json_duplicate_name': refusing(
    'schema',
    BAD_REQUEST,
    'An object has the same member name twice (after unescaping); readers disagree on which value counts. path points at the second one.',
  ),
  'schema.json_too_deep': refusing('schema', BAD_REQUEST, 'Objects and arrays are nested more than 64 levels deep.'),
  'schema.json_number_unsafe': refusing(
    'schema',
    BAD_REQUEST,
    'An integer beyond ±(2^53 − 1), or a number too large for a double: readers would read different numbers. Send such values as strings.',
  ),
  'schema.json_string_invalid': refusing(
    'schema',
    BAD_REQUEST,
    'A string or member name holds an escaped lone surrogate (\\uD800–\\uDFFF without its pair), which UTF-8 readers replace or refuse.',
  ),
  'schema.not_object': refusing('schema', BAD_REQUEST, 'The body is JSON but not an object.'),
  'schema.message_type_unknown': refusing('schema', BAD_REQUEST, 'message_type names no type the bus has a schema for (GET /v1/health lists them).'),

  // One per JSON Schema keyword of the SOM schemas, so the rule says what kind of mistake it is.
  'schema.required': refusing('schema', BAD_REQUEST, 'A required property is missing; path points where it belongs.'),
  'schema.additional_property': refusing(
    'schema',
    BAD_REQUEST,
    'A property the schema does not define; path points at it. Unknown fields are refused, in the envelope and in payloads.',
  ),
  'schema.type': refusing('schema', BAD_REQUEST, 'A value has the wrong JSON type.'),
  'schema.enum': refusing('schema', BAD_REQUEST, 'A value is not one of the allowed values.'),
  'schema.format': refusing('schema', BAD_REQUEST, 'A string does not have its format (uuid, date-time, uri).'),
  'schema.pattern': refusing(
    'schema',
    BAD_REQUEST,
    'A string does not match its pattern, e.g. an identifier with characters outside letters, digits and . _ : -.',
  ),
  'schema.min_length': refusing('schema', BAD_REQUEST, 'A string is shorter than allowed (usually: empty).'),
  'schema.max_length': refusing('schema', BAD_REQUEST, 'A string is longer than allowed.'),
  'schema.minimum': refusing('schema', BAD_REQUEST, 'A number is below its minimum.'),
  'schema.maximum': refusing('schema', BAD_REQUEST, 'A number is above its maximum.'),
  'schema.min_items': refusing('schema', BAD_REQUEST, 'An array has fewer items than allowed.'),
  'schema.max_items': refusing('schema', BAD_REQUEST, 'An array has more items than allowed.'),
  'schema.unique_items': refusing('schema', BAD_REQUEST, 'An array that must hold distinct items holds a duplicate.'),
  'schema.invalid': refusing('schema', BAD_REQUEST, 'A value fails a schema keyword that has no rule of its own.'),

  'conformance.som_version_unsupported': refusing('conformance', BAD_REQUEST, 'som_version is well formed but not 1.0, the only version the bus implements.'),
  'conformance.message_id_nil': refusing(
    'conformance',
    BAD_REQUEST,
    'message_id is the nil or the max UUID (in any spelling), which cannot identify one message.',
  ),
  'conformance.message_id_not_canonical': refusing(
    'conformance',
    BAD_REQUEST,
    'message_id is a UUID in upper or mixed case or with a urn:uuid: prefix; the bus accepts only the lower-case hyphenated form, so one UUID is one message.',
  ),
  'conformance.occurred_at_future': tolerated(
    'conformance',
    'occurred_at is more than 5 minutes ahead of the bus clock: probably a skewed producer clock. Reported, not refused.',
  ),
  'conformance.occurred_at_far_future': refusing('conformance', BAD_REQUEST, 'occurred_at is more than 24 hours ahead of the bus clock.'),
  'conformance.reference_mismatch': refusing(
    'conformance',
    BAD_REQUEST,
    'A payload field that restates an envelope field has another value (skill.warning.raised: trigger.correlation_id must be the envelope correlation_id).',
  ),
  'conformance.self_reference': refusing(
    'conformance',
    BAD_REQUEST,
    'A payload reference names the thing itself: a trigger or subject naming this message_id, a link superseded by itself, a link from a segment to the same segment.',
  ),
  'conformance.duplicate_id': refusing('conformance', BAD_REQUEST, 'story.context: two characters, places or canon facts share an id.'),
  'conformance.dangling_reference': refusing('conformance', BAD_REQUEST, 'story.context: a relationship names a character the payload does not define.'),
  'conformance.time_range_inverted': refusing(
    'conformance',
    BAD_REQUEST,
    'A time range does not end after it starts (delivery.media_available: available_until not after available_from).',
  ),
  'conformance.gate_unchanged': tolerated(
    'conformance',
    'link.gate_changed with to_state equal to from_state: a change that changes nothing. Reported, not refused.',
  ),

  'policy.system_id_not_allowed': refusing('policy', FORBIDDEN, 'The app may not publish for this system_id.'),
  'policy.message_type_not_allowed': refusing('policy', FORBIDDEN, 'The app may not publish this message_type.'),

  'sequence.telling.not_started': refusing('sequence', CONFLICT, 'telling.exposed or telling.ended before telling.started on this correlation id.'),
  'sequence.telling.already_started': refusing('sequence', CONFLICT, 'A second telling.started while a telling is under way on this correlation id.'),
  'sequence.telling.ended': refusing(
    'sequence',
    CONFLICT,
    'A telling message after telling.ended on this correlation id: a correlation id carries one telling.',
  ),
  'sequence.telling.mismatch': refusing('sequence', CONFLICT, 'telling_id or story_id differs from the telling started on this correlation id.'),
  'sequence.link.not_committed': refusing('sequence', CONFLICT, 'link.gate_changed or link.withdrawn for a link_id not committed on this correlation id.'),
  'sequence.link.already_committed': refusing('sequence', CONFLICT, 'link.committed for a link_id already committed on this correlation id.'),
  'sequence.link.withdrawn': refusing('sequence', CONFLICT, 'A link message for a link_id already withdrawn on this correlation id.'),
  'sequence.link.gate_mismatch': refusing('sequence', CONFLICT, 'link.gate_changed whose from_state is not the gate state the link has.'),

  // Request-level refusals, answered by the gateway before or around validation.
  'producer.unauthenticated': refusing(
    'policy',
    401,
    'The token is missing, invalid, expired, issued before a rotation, for another environment, or for a workspace the app left. Signed routes: the AWS SigV4 signature is missing, malformed, over an unknown or revoked access key, wrong, outside the clock skew, for another region or service, or the body does not match x-amz-content-sha256.',
  ),
  'producer.not_registered': refusing(
    'policy',
    FORBIDDEN,
    'The connection is not active, or is of the wrong kind for the route. Signed routes: the AWS principal is not verified yet.',
  ),
  'principal.challenge_invalid': refusing(
    'policy',
    FORBIDDEN,
    "POST /v1/tenants/{t}/principals/verify: the challenge is not the principal's outstanding one: unknown, already used, expired (10 minutes), or the principal is already verified. Ask the operator for a new challenge.",
  ),
  'tenant.mismatch': refusing('policy', FORBIDDEN, "The workspace in the path is not the token's workspace."),
  'consumer.mismatch': refusing('policy', FORBIDDEN, "Consumer routes: the consumer {c} in the path is not the token's own connection."),
  'request.invalid': refusing(
    'conformance',
    BAD_REQUEST,
    'Consumer routes: a query parameter or body is malformed (max_messages, wait_seconds, visibility_timeout, receipt_handles, delay_seconds). Tester routes: a message_id that is not a UUID or a correlation_id that is not an identifier. principals/verify: the body is not { "challenge": "sbc_…" }.',
  ),
  'message.unknown': refusing(
    'policy',
    404,
    'GET /v1/tenants/{t}/messages/{message_id}: the workspace accepted no message with this message_id (or its record is past retention).',
  ),
  'story.unknown': refusing(
    'policy',
    404,
    'GET /v1/tenants/{t}/stories/{correlation_id}: the workspace holds no story state and no accepted message for this correlation id.',
  ),
  'run.unknown': refusing('policy', 404, 'GET or POST /v1/tenants/{t}/runs/{run_id}…: the workspace has no test run with this id (or it is past retention).'),
  'request.blocked': refusing('policy', FORBIDDEN, 'The firewall refused the request as an attack pattern; it does not judge SOM content.'),
  'idempotency.message_id_reused': refusing('policy', CONFLICT, 'The message_id was accepted before with different content.'),
  'message.too_large': refusing('conformance', 413, 'The body is over 240,000 bytes.'),
  'rate.limited': refusing('policy', 429, 'A per-second limit is exceeded; Retry-After says when to try again.'),
  'quota.exceeded': refusing('policy', 429, "The connection's daily quota is used up; it resets at midnight UTC."),
  'registry.unavailable': refusing(
    'policy',
    503,
    'The registry (connections, permissions, quotas) could not be read; nothing was carried out. Retry the request (a publish with the same message_id).',
  ),
  'publish.unavailable': refusing(
    'policy',
    503,
    'The message could not be committed (Kafka or Postgres did not answer); nothing was accepted. Retry with the same message_id.',
  ),
  'records.unavailable': refusing(
    'policy',
    503,
    'Tester routes (message trace, recent refusals, story view): the records (Postgres) could not be read; retry the request.',
  ),
  'identity.provider_unavailable': refusing(
    'policy',
    503,
    "Publish and validate with an external identity provider's token (and POST /v1/jwt/messages): the provider's key set (JWKS) could not be fetched, so the token could not be checked; nothing was carried out. Retry after Retry-After with the same message_id.",
  ),
  'keys.unavailable': refusing('policy', 503, 'GET /v1/oauth/jwks: no signing key could be read; retry shortly.'),
  'queue.unavailable': refusing(
    'policy',
    503,
    'Consumer routes: the queue or the skill registrations (Postgres) could not be read or changed; retry the request. A failed receive hands nothing out (a lease it may have taken ends with its visibility timeout); a handle an ack or nack settled before the failure answers receipt_handle.stale on the retry.',
  ),
  'route.not_found': refusing('policy', 404, 'No route for this path.'),
  'method.not_allowed': refusing('policy', 405, 'The path exists but does not serve this method; the Allow header lists the methods it serves.'),
  'request.malformed': refusing(
    'policy',
    BAD_REQUEST,
    "The request is not one any route could read as sent, refused before any route saw it: Node's HTTP parser refused it (CR or NUL in a header, Content-Length with Transfer-Encoding, bad chunked encoding, an unknown method); its target has a malformed percent escape or escaped bytes that are not UTF-8; an HTTP/1.1 request has no Host header or more than one; a Transfer-Encoding other than chunked alone; two Authorization headers; or its body broke off. The connection is closed.",
  ),
  'request.headers_too_large': refusing('policy', 431, 'The request line and headers are over 16 KB; the connection is closed.'),
  'request.timeout': refusing('policy', 408, 'The request was not received in full in time; the connection is closed.'),
  'request.content_encoding_unsupported': refusing(
    'policy',
    415,
    'The request carries a Content-Encoding other than identity; the bus reads bodies only as sent (no gzip, no deflate). Send the body uncompressed without the header.',
  ),
  'request.expectation_failed': refusing(
    'policy',
    417,
    'The request carries an Expect header other than 100-continue, the only expectation the bus meets; the connection is closed.',
  ),
  'internal.error': refusing('policy', 500, 'An unexpected error; it is logged with the request id.'),
} as const satisfies Record<string, RuleDefinition>;

export type RuleId = keyof typeof RULES;

export function isRuleId(rule: string): rule is RuleId {
  return Object.hasOwn(RULES, rule);
}

/** A violation of a catalogued rule; its source comes from the catalogue, so it cannot disagree. */
export function violation(rule: RuleId, message: string, path?: string): Violation {
  const found: Violation = { source: RULES[rule].source, rule, message };
  if (path !== undefined) found.path = path;
  return found;
}

/** Splits violations into those that refuse the message and those only reported on a 202. */
export function splitTolerated(violations: readonly Violation[]): { refusing: Violation[]; tolerated: Violation[] } {
  const refusing: Violation[] = [];
  const toleratedOnes: Violation[] = [];
  for (const found of violations) {
    // An uncatalogued rule is a bug elsewhere; refusing is the safe side of it.
    if (isRuleId(found.rule) && RULES[found.rule].tolerated) toleratedOnes.push(found);
    else refusing.push(found);
  }
  return { refusing, tolerated: toleratedOnes };
}

export interface RulesCatalogue {
  som_version: string;
  rules: Array<{ rule: RuleId } & RuleDefinition>;
}

/** The body of GET /v1/rules: every rule, ordered by id. */
export function rulesCatalogue(): RulesCatalogue {
  const ids = (Object.keys(RULES) as RuleId[]).sort();
  return { som_version: SOM_VERSION, rules: ids.map((rule) => ({ rule, ...RULES[rule] })) };
}
