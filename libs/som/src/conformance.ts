/**
 * Conformance: rules beyond what JSON Schema can say, on one message alone (no story state). A check
 * of an envelope field runs only when that field passed the schema, and payload checks only when the
 * whole message did, so a broken field yields its schema violation and nothing more.
 */
import { SOM_ENVELOPE_VERSION, type SomMessage } from './message';
import { violation } from './rules';
import { epochMsOf } from './time';
import { jsonPointer, type Violation } from '@bus/contracts';

export interface ClockOptions {
  readonly now: () => Date;
  /** occurred_at further ahead of now than this is reported as tolerated. */
  readonly skewWarningMs: number;
  /** occurred_at further ahead of now than this is refused. */
  readonly maxFutureSkewMs: number;
}

const NIL_UUIDS = new Set(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']);

/**
 * The one spelling of a UUID the schema's `uuid` format accepts in several (upper case, a `urn:uuid:`
 * prefix): lower case, hyphenated, no prefix. A message_id is its message's identity — idempotency,
 * sequence and delivery compare it as a string — so only this spelling is accepted (docs/gateway.md).
 */
export function canonicalUuid(value: string): string {
  return value.replace(/^urn:uuid:/i, '').toLowerCase();
}

type EnvelopeField = 'som_version' | 'message_id' | 'occurred_at';

const ENVELOPE_CHECKS: ReadonlyArray<{ field: EnvelopeField; check: (value: string, clock: ClockOptions) => Violation[] }> = [
  {
    field: 'som_version',
    check: (value) =>
      value === SOM_ENVELOPE_VERSION
        ? []
        : [violation('conformance.som_version_unsupported', `som_version is ${value}; the bus implements SOM ${SOM_ENVELOPE_VERSION}`, '/som_version')],
  },
  {
    field: 'message_id',
    check: (value) => {
      const canonical = canonicalUuid(value);
      if (NIL_UUIDS.has(canonical))
        return [violation('conformance.message_id_nil', `message_id ${value} is a reserved UUID; use a random (v4) or time-ordered (v7) one`, '/message_id')];
      if (canonical !== value)
        return [
          violation('conformance.message_id_not_canonical', `message_id must be written in lower case without a urn:uuid: prefix: ${canonical}`, '/message_id'),
        ];
      return [];
    },
  },
  {
    field: 'occurred_at',
    check: (value, clock) => {
      const aheadMs = epochMsOf(value) - clock.now().getTime();
      const ahead = `occurred_at is ${Math.round(aheadMs / 1000)} s ahead of the bus clock`;
      if (aheadMs > clock.maxFutureSkewMs)
        return [violation('conformance.occurred_at_far_future', `${ahead}, over the ${clock.maxFutureSkewMs / 1000} s allowed`, '/occurred_at')];
      if (aheadMs > clock.skewWarningMs) return [violation('conformance.occurred_at_future', `${ahead}; check the producer's clock`, '/occurred_at')];
      return [];
    },
  },
];

/** Envelope checks, skipping fields at `schemaFailures` (pointers that already have a schema violation). */
export function checkEnvelope(envelope: Readonly<Record<string, unknown>>, schemaFailures: ReadonlySet<string>, clock: ClockOptions): Violation[] {
  return ENVELOPE_CHECKS.flatMap(({ field, check }) => {
    const value = envelope[field];
    return typeof value === 'string' && !schemaFailures.has(jsonPointer('', field)) ? check(value, clock) : [];
  });
}

// Views of payloads that passed their schema: only the fields the checks read.
interface Identified {
  readonly [idField: string]: unknown;
}
interface StoryContextView {
  readonly setting: { readonly places?: readonly Identified[] };
  readonly characters: ReadonlyArray<Identified & { readonly relationships?: ReadonlyArray<{ readonly character_id: string }> }>;
  readonly canon?: readonly Identified[];
}
interface SegmentRef {
  readonly story_id?: string;
  readonly segment_id: string;
}
interface MessageRef {
  readonly message_id: string;
  readonly correlation_id?: string;
}

type PayloadCheck = (message: SomMessage) => Violation[];

/** Payload checks per message type; a type without an entry has none. */
export const PAYLOAD_CHECKS: Readonly<Record<string, readonly PayloadCheck[]>> = {
  'story.context': [idsAreUnique, relationshipsNameKnownCharacters],
  'link.committed': [linkLeavesItsSegment],
  'link.gate_changed': [gateChanges],
  'link.withdrawn': [notSupersededBySelf],
  'delivery.media_available': [availabilityEndsAfterItStarts],
  'skill.warning.raised': [triggerSharesCorrelation, (message) => refNotSelf(message, 'trigger')],
  'system.audit': [(message) => refNotSelf(message, 'subject')],
};

/** Payload checks of a message that passed schema validation as a whole. */
export function checkPayload(message: SomMessage): Violation[] {
  const checks = Object.hasOwn(PAYLOAD_CHECKS, message.message_type) ? PAYLOAD_CHECKS[message.message_type] : undefined;
  return (checks ?? []).flatMap((check) => check(message));
}

function idsAreUnique(message: SomMessage): Violation[] {
  const context = message.payload as unknown as StoryContextView;
  const lists: Array<[string[], readonly Identified[] | undefined, string]> = [
    [['setting', 'places'], context.setting.places, 'place_id'],
    [['characters'], context.characters, 'character_id'],
    [['canon'], context.canon, 'fact_id'],
  ];
  return lists.flatMap(([at, items, idField]) => {
    const seen = new Set<unknown>();
    return (items ?? []).flatMap((item, index) => {
      const id = item[idField];
      if (!seen.has(id)) {
        seen.add(id);
        return [];
      }
      return [violation('conformance.duplicate_id', `${idField} ${String(id)} is used by an earlier item too`, jsonPointer('/payload', ...at, index, idField))];
    });
  });
}

function relationshipsNameKnownCharacters(message: SomMessage): Violation[] {
  const { characters } = message.payload as unknown as StoryContextView;
  const known = new Set(characters.map((character) => character['character_id']));
  return characters.flatMap((character, index) =>
    (character.relationships ?? []).flatMap((relationship, relIndex) =>
      known.has(relationship.character_id)
        ? []
        : [
            violation(
              'conformance.dangling_reference',
              `relationship names character ${relationship.character_id}, which is not among the characters`,
              jsonPointer('/payload', 'characters', index, 'relationships', relIndex, 'character_id'),
            ),
          ],
    ),
  );
}

function linkLeavesItsSegment(message: SomMessage): Violation[] {
  const { story_id: storyId, from, to } = message.payload as { story_id: string; from: SegmentRef; to: SegmentRef };
  const sameStory = (from.story_id ?? storyId) === (to.story_id ?? storyId);
  return sameStory && from.segment_id === to.segment_id
    ? [violation('conformance.self_reference', `the link leads from segment ${from.segment_id} to itself`, '/payload/to/segment_id')]
    : [];
}

function gateChanges(message: SomMessage): Violation[] {
  const { from_state: fromState, to_state: toState } = message.payload as { from_state: string; to_state: string };
  return fromState === toState ? [violation('conformance.gate_unchanged', `the gate stays ${toState}`, '/payload/to_state')] : [];
}

function notSupersededBySelf(message: SomMessage): Violation[] {
  const { link_id: linkId, superseded_by: supersededBy } = message.payload as { link_id: string; superseded_by?: string };
  return supersededBy === linkId ? [violation('conformance.self_reference', `link ${linkId} cannot be superseded by itself`, '/payload/superseded_by')] : [];
}

function availabilityEndsAfterItStarts(message: SomMessage): Violation[] {
  const { available_from: from, available_until: until } = message.payload as { available_from: string; available_until?: string };
  return until !== undefined && epochMsOf(until) <= epochMsOf(from)
    ? [violation('conformance.time_range_inverted', `available_until ${until} is not after available_from ${from}`, '/payload/available_until')]
    : [];
}

// A skill raises its warning on the correlation id of the message that triggered it, so consumers see
// the warning in order with the story it is about.
function triggerSharesCorrelation(message: SomMessage): Violation[] {
  const { trigger } = message.payload as { trigger: MessageRef };
  return trigger.correlation_id !== undefined && trigger.correlation_id !== message.correlation_id
    ? [
        violation(
          'conformance.reference_mismatch',
          `trigger.correlation_id is ${trigger.correlation_id} but the message's correlation_id is ${message.correlation_id}`,
          '/payload/trigger/correlation_id',
        ),
      ]
    : [];
}

function refNotSelf(message: SomMessage, field: 'trigger' | 'subject'): Violation[] {
  const ref = message.payload[field] as MessageRef | undefined;
  return ref !== undefined && canonicalUuid(ref.message_id) === canonicalUuid(message.message_id)
    ? [violation('conformance.self_reference', `${field}.message_id names this message itself`, jsonPointer('/payload', field, 'message_id'))]
    : [];
}
