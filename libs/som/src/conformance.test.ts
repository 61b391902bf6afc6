import fc from 'fast-check';
import { canonicalUuid, PAYLOAD_CHECKS } from './conformance';
import { MESSAGE_TYPES } from './schema-set';
import { createSomValidator } from './validator';
import { exampleWith, REMOVE, TEST_NOW, testValidator } from './testing';

const validator = testValidator();
const minutesFromNow = (minutes: number) => new Date(TEST_NOW.getTime() + minutes * 60_000).toISOString();

function outcome(messageType: string, changes: Readonly<Record<string, unknown>>) {
  const { ok, violations, tolerated } = validator.validate(exampleWith(messageType, changes));
  const brief = (found: { rule: string; path?: string }) => [found.rule, found.path];
  return { ok, violations: violations.map(brief), tolerated: tolerated.map(brief) };
}

const passes = { ok: true, violations: [], tolerated: [] };

// Each refusing rule: the example made wrong (refused with the rule) and a near miss that passes.
describe.each([
  ['conformance.som_version_unsupported', 'telling.started', { '/som_version': '1.1' }, { '/som_version': '1.0' }, '/som_version'],
  ['conformance.som_version_unsupported', 'telling.started', { '/som_version': '2.0' }, { '/som_version': '1.0' }, '/som_version'],
  [
    'conformance.message_id_nil',
    'telling.started',
    { '/message_id': '00000000-0000-0000-0000-000000000000' },
    { '/message_id': '00000000-0000-4000-8000-000000000001' },
    '/message_id',
  ],
  [
    'conformance.message_id_nil',
    'telling.started',
    { '/message_id': 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' },
    { '/message_id': 'ffffffff-ffff-4fff-bfff-fffffffffffe' },
    '/message_id',
  ],
  [
    'conformance.message_id_nil',
    'telling.started',
    { '/message_id': 'urn:uuid:00000000-0000-0000-0000-000000000000' },
    { '/message_id': '00000000-0000-4000-8000-000000000001' },
    '/message_id',
  ],
  [
    'conformance.message_id_not_canonical',
    'telling.started',
    { '/message_id': 'DC9C9E64-FBD0-4F66-8D8A-A247F1FBB572' },
    { '/message_id': 'dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572' },
    '/message_id',
  ],
  [
    'conformance.message_id_not_canonical',
    'telling.started',
    { '/message_id': 'urn:uuid:dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572' },
    { '/message_id': 'dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572' },
    '/message_id',
  ],
  [
    'conformance.occurred_at_far_future',
    'telling.started',
    { '/occurred_at': minutesFromNow(24 * 60 + 1) },
    { '/occurred_at': minutesFromNow(-24 * 60) },
    '/occurred_at',
  ],
  [
    'conformance.reference_mismatch',
    'skill.warning.raised',
    { '/payload/trigger/correlation_id': 'session-other' },
    { '/payload/trigger/correlation_id': REMOVE },
    '/payload/trigger/correlation_id',
  ],
  [
    'conformance.self_reference',
    'skill.warning.raised',
    { '/payload/trigger/message_id': '0193F3A2-6C1E-7B4A-9D2F-3A1C5E7B9D09' },
    { '/payload/trigger/message_id': '0193f3a2-6c1e-7b4a-9d2f-3a1c5e7b9d08' },
    '/payload/trigger/message_id',
  ],
  [
    'conformance.self_reference',
    'system.audit',
    { '/payload/subject/message_id': '0193f3a2-6c1e-7b4a-9d2f-3a1c5e7b9d0a' },
    { '/payload/subject': REMOVE },
    '/payload/subject/message_id',
  ],
  [
    'conformance.self_reference',
    'link.withdrawn',
    { '/payload/superseded_by': 'link-stairs-or-harbour' },
    { '/payload/superseded_by': REMOVE },
    '/payload/superseded_by',
  ],
  [
    'conformance.self_reference',
    'link.committed',
    { '/payload/to/segment_id': 'seg-003-door' },
    { '/payload/to/segment_id': 'seg-003-door', '/payload/to/story_id': 'story-sequel' },
    '/payload/to/segment_id',
  ],
  [
    'conformance.duplicate_id',
    'story.context',
    { '/payload/characters/2/character_id': 'char-fen' },
    { '/payload/characters/2/character_id': 'char-tamsin' },
    '/payload/characters/2/character_id',
  ],
  [
    'conformance.duplicate_id',
    'story.context',
    { '/payload/setting/places/1/place_id': 'place-lighthouse' },
    { '/payload/setting/places/1/place_id': 'place-quay' },
    '/payload/setting/places/1/place_id',
  ],
  [
    'conformance.duplicate_id',
    'story.context',
    { '/payload/canon/2/fact_id': 'fact-001' },
    { '/payload/canon/2/fact_id': 'fact-004' },
    '/payload/canon/2/fact_id',
  ],
  [
    'conformance.dangling_reference',
    'story.context',
    { '/payload/characters/0/relationships/0/character_id': 'char-nobody' },
    { '/payload/characters/0/relationships/0/character_id': 'char-keeper' },
    '/payload/characters/0/relationships/0/character_id',
  ],
  [
    'conformance.time_range_inverted',
    'delivery.media_available',
    { '/payload/available_until': '2026-11-22T09:30:40Z' },
    { '/payload/available_until': '2026-11-22T10:30:41+01:00' },
    '/payload/available_until',
  ],
])('%s', (rule, messageType, wrong, right, at) => {
  it(`refuses ${JSON.stringify(wrong)}`, () => {
    expect(outcome(messageType, wrong)).toEqual({ ok: false, violations: [[rule, at]], tolerated: [] });
  });

  it(`passes ${JSON.stringify(right)}`, () => {
    expect(outcome(messageType, right)).toEqual(passes);
  });
});

describe('message_id spellings', () => {
  // One UUID in each spelling the uuid format accepts: only the lower-case hyphenated one is accepted,
  // so no two accepted message_ids can name the same UUID.
  const spelling = fc
    .tuple(fc.uuid(), fc.array(fc.boolean(), { minLength: 36, maxLength: 36 }), fc.constantFrom('', 'urn:uuid:', 'URN:UUID:', 'Urn:Uuid:'))
    .map(([uuid, upper, prefix]) => ({ uuid, written: prefix + [...uuid].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('') }));

  test('a UUID is accepted in exactly one spelling, its canonical form', () => {
    fc.assert(
      fc.property(spelling, ({ uuid, written }) => {
        const rules = outcome('telling.started', { '/message_id': written }).violations.map(([rule]) => rule);
        const nil = uuid === '00000000-0000-0000-0000-000000000000' || uuid === 'ffffffff-ffff-ffff-ffff-ffffffffffff';
        expect(canonicalUuid(written)).toBe(uuid);
        if (nil) expect(rules).toEqual(['conformance.message_id_nil']);
        else if (written === uuid) expect(rules).toEqual([]);
        else expect(rules).toEqual(['conformance.message_id_not_canonical']);
      }),
    );
  });

  test.each(['00000000-0000-0000-0000-000000000000', 'URN:UUID:FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', 'urn:uuid:00000000-0000-0000-0000-000000000000'])(
    'the nil and max UUIDs are refused as nil in every spelling: %s',
    (written) => {
      expect(outcome('telling.started', { '/message_id': written }).violations).toEqual([['conformance.message_id_nil', '/message_id']]);
    },
  );
});

describe('tolerated rules', () => {
  it('conformance.occurred_at_future: reports an occurred_at over 5 minutes ahead without refusing', () => {
    expect(outcome('telling.started', { '/occurred_at': minutesFromNow(6) })).toEqual({
      ok: true,
      violations: [],
      tolerated: [['conformance.occurred_at_future', '/occurred_at']],
    });
    expect(outcome('telling.started', { '/occurred_at': minutesFromNow(24 * 60) }).tolerated).toEqual([['conformance.occurred_at_future', '/occurred_at']]);
  });

  it('conformance.occurred_at_future: lets up to 5 minutes of skew pass silently, whatever the offset', () => {
    expect(outcome('telling.started', { '/occurred_at': minutesFromNow(5) })).toEqual(passes);
    expect(outcome('telling.started', { '/occurred_at': '2026-11-22T11:04:59+01:00' })).toEqual(passes);
    expect(outcome('telling.started', { '/occurred_at': '2026-11-22T06:05:01-04:00' }).tolerated).toHaveLength(1);
  });

  it('conformance.gate_unchanged: reports a gate change to the same state without refusing', () => {
    expect(outcome('link.gate_changed', { '/payload/to_state': 'closed' })).toEqual({
      ok: true,
      violations: [],
      tolerated: [['conformance.gate_unchanged', '/payload/to_state']],
    });
    expect(outcome('link.gate_changed', { '/payload/to_state': 'hidden' })).toEqual(passes);
  });

  it('lists tolerated violations of a refused message too', () => {
    expect(outcome('telling.started', { '/occurred_at': minutesFromNow(10), '/som_version': '1.1' })).toEqual({
      ok: false,
      violations: [['conformance.som_version_unsupported', '/som_version']],
      tolerated: [['conformance.occurred_at_future', '/occurred_at']],
    });
  });
});

describe('clock options', () => {
  it('takes the skew limits from the options', () => {
    const strict = createSomValidator({ now: () => TEST_NOW, skewWarningMs: 1_000, maxFutureSkewMs: 60_000 });
    const at = (minutes: number) => strict.validate(exampleWith('telling.started', { '/occurred_at': minutesFromNow(minutes) }));
    expect(at(0.5).tolerated.map((found) => found.rule)).toEqual(['conformance.occurred_at_future']);
    expect(at(2).violations.map((found) => found.rule)).toEqual(['conformance.occurred_at_far_future']);
  });
});

describe('conformance after schema', () => {
  it('does not check an envelope field that failed the schema', () => {
    expect(outcome('telling.started', { '/som_version': '1', '/occurred_at': '2099-02-30T10:00:00Z' }).violations).toEqual([
      ['schema.pattern', '/som_version'],
      ['schema.format', '/occurred_at'],
    ]);
  });

  it('checks sound envelope fields even when other fields fail the schema', () => {
    expect(outcome('telling.started', { '/som_version': '1.1', '/payload/channel': 'fax' }).violations).toEqual([
      ['schema.enum', '/payload/channel'],
      ['conformance.som_version_unsupported', '/som_version'],
    ]);
  });

  it('checks the payload only when the whole message passed the schema', () => {
    const changes = { '/payload/characters/2/character_id': 'char-fen', '/system_id': 'Storyteller' };
    expect(outcome('story.context', changes).violations).toEqual([['schema.pattern', '/system_id']]);
  });
});

describe('PAYLOAD_CHECKS', () => {
  it('has checks only for message types that have schemas', () => {
    expect(Object.keys(PAYLOAD_CHECKS).filter((type) => !MESSAGE_TYPES.includes(type))).toEqual([]);
  });
});
