import { som } from '@bus/schemas';
import type { ErrorObject } from 'ajv';
import { KEYWORD_RULES, schemaViolation } from './schema-errors';
import { example, exampleWith, REMOVE, testValidator } from './testing';

const validator = testValidator();

function rulesAt(message: unknown): Array<[string, string | undefined]> {
  const result = validator.validate(message);
  return result.violations.map((found) => [found.rule, found.path]);
}

// Each rule: the example of a message type with one value made wrong (fails) and made right (passes).
// The right value differs from the example's where that shows the boundary.
describe.each([
  ['schema.required', 'telling.started', '/payload/telling_id', REMOVE, 'telling-0002'],
  ['schema.required', 'telling.started', '/occurred_at', REMOVE, '2026-11-22T09:59:00Z'],
  ['schema.additional_property', 'telling.started', '/trace_id', 'abc', REMOVE],
  ['schema.additional_property', 'telling.started', '/payload/narrator/accent', 'cornish', REMOVE],
  ['schema.type', 'telling.exposed', '/payload/position_ms', '67000', 67000],
  ['schema.type', 'telling.exposed', '/payload', [], { telling_id: 't', story_id: 's', segment: { segment_id: 'g', kind: 'scene' }, position_ms: 0 }],
  ['schema.enum', 'telling.started', '/payload/channel', 'fax', 'web'],
  ['schema.format', 'telling.started', '/message_id', '0193f3a2-6c1e-7b4a-9d2f-3a1c5e7b9dzz', '0193f3a2-6c1e-7b4a-9d2f-3a1c5e7b9dff'],
  ['schema.format', 'telling.started', '/occurred_at', '2026-02-30T10:00:00Z', '2026-02-28T10:00:00Z'],
  ['schema.format', 'delivery.media_available', '/payload/uri', 'https://media example/x.ogg', 'https://media.example/x.ogg'],
  ['schema.pattern', 'telling.started', '/correlation_id', 'session 7f3a9c', 'session:7f3a9c'],
  ['schema.pattern', 'telling.started', '/occurred_at', '2026-11-22t09:30:05z', '2026-11-22T09:30:05.123+01:00'],
  ['schema.pattern', 'delivery.media_available', '/payload/uri', 'http://media.example/x.ogg', 'https://media.example/x.ogg'],
  ['schema.min_length', 'story.context', '/payload/story/title', '', 'T'],
  ['schema.max_length', 'skill.warning.raised', '/payload/summary', 'x'.repeat(201), 'x'.repeat(200)],
  ['schema.minimum', 'telling.started', '/payload/story_revision', 0, 1],
  ['schema.maximum', 'delivery.media_available', '/payload/bytes', 10_737_418_241, 10_737_418_240],
  ['schema.min_items', 'story.context', '/payload/characters', [], [{ character_id: 'c', name: 'C', role: 'narrator' }]],
  ['schema.max_items', 'story.context', '/payload/story/subgenres', names(11), names(10)],
  ['schema.unique_items', 'telling.exposed', '/payload/characters', ['char-fen', 'char-fen'], ['char-fen']],
  ['schema.message_type_unknown', 'telling.started', '/message_type', 'telling.paused', 'telling.started'],
])('%s (%s %s)', (rule, messageType, at, wrong, right) => {
  it('fails with the path of the offending value', () => {
    expect(rulesAt(exampleWith(messageType, { [at]: wrong }))).toEqual([[rule, at]]);
  });

  it('passes with a right value', () => {
    expect(validator.validate(exampleWith(messageType, { [at]: right }))).toMatchObject({ ok: true, violations: [] });
  });
});

describe('schema.not_object', () => {
  it.each([[[]], [null], ['a string'], [42], [true]])('refuses %j', (value) => {
    expect(validator.validate(value).violations).toEqual([expect.objectContaining({ source: 'schema', rule: 'schema.not_object', path: '' })]);
  });

  it('accepts an object', () => {
    expect(validator.validate(example('telling.started')).ok).toBe(true);
  });
});

describe('schema.json_invalid', () => {
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  it.each([
    ['not JSON', new TextEncoder().encode('{"som_version": "1.0",')],
    ['not UTF-8', Uint8Array.of(0x7b, 0x22, 0xff, 0x22, 0x7d)],
    ['empty', new Uint8Array()],
  ])('refuses a body that is %s, without a path', (_, body) => {
    expect(validator.validateBytes(body).violations).toEqual([{ source: 'schema', rule: 'schema.json_invalid', message: expect.any(String) }]);
  });

  it.each([
    ['a byte order mark', Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d), { rule: 'schema.json_bom' }],
    ['a member name twice', new TextEncoder().encode('{"message_id":"a","message_id":"b"}'), { rule: 'schema.json_duplicate_name', path: '/message_id' }],
    ['nesting too deep', new TextEncoder().encode('['.repeat(100) + ']'.repeat(100)), { rule: 'schema.json_too_deep', path: expect.any(String) }],
  ])('refuses a body with %s as its schema.json_* rule (I-JSON, @bus/contracts)', (_, body, found) => {
    expect(validator.validateBytes(body).violations).toEqual([{ source: 'schema', message: expect.any(String), ...found }]);
  });

  it('parses and validates a JSON body', () => {
    expect(validator.validateBytes(encode(example('story.context')))).toMatchObject({ ok: true });
    expect(validator.validateBytes(encode([])).violations).toEqual([expect.objectContaining({ rule: 'schema.not_object' })]);
  });
});

describe('schema violations', () => {
  it('reports every violation at once, in the envelope and the payload', () => {
    const message = exampleWith('telling.exposed', {
      '/message_id': 'nope',
      '/extra': 1,
      '/payload/segment/kind': 'montage',
      '/payload/story_id': REMOVE,
      '/payload/position_ms': -1,
    });
    expect(rulesAt(message).sort()).toEqual(
      [
        ['schema.format', '/message_id'],
        ['schema.additional_property', '/extra'],
        ['schema.enum', '/payload/segment/kind'],
        ['schema.required', '/payload/story_id'],
        ['schema.minimum', '/payload/position_ms'],
      ].sort(),
    );
  });

  it('escapes / and ~ in property names, as JSON Pointer requires', () => {
    expect(rulesAt(exampleWith('telling.started', { '/payload/a~1b~0c': 1 }))).toEqual([['schema.additional_property', '/payload/a~1b~0c']]);
  });

  it('checks no payload when the message_type is malformed or the payload is not an object', () => {
    expect(rulesAt(exampleWith('telling.started', { '/message_type': 'Telling.Started', '/payload': {} }))).toEqual([['schema.pattern', '/message_type']]);
    expect(rulesAt(exampleWith('telling.started', { '/payload': 'none' }))).toEqual([['schema.type', '/payload']]);
    expect(rulesAt(exampleWith('telling.started', { '/payload': REMOVE }))).toEqual([['schema.required', '/payload']]);
  });

  it('says what is wrong, for people', () => {
    const [enumViolation] = validator.validate(exampleWith('telling.started', { '/payload/channel': 'fax' })).violations;
    expect(enumViolation?.message).toBe('/payload/channel must be one of "broadcast", "live", "mobile_app", "smart_speaker", "voice_assistant", "web"');
  });
});

describe('a body of thousands of schema violations', () => {
  it('lists the first 100 of the envelope and of the payload and counts the rest', () => {
    const message: Record<string, unknown> = { ...example('story.context') };
    const payload: Record<string, unknown> = { ...(message['payload'] as Record<string, unknown>) };
    for (let i = 0; i < 25_000; i++) message[`u${i}`] = 0;
    for (let i = 0; i < 300; i++) payload[`p${i}`] = 0;
    message['payload'] = payload;
    const result = testValidator().validate(message);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.violations).toHaveLength(200);
    expect(result.omitted).toBe(25_000 + 300 - 200);
    expect(result.violations[0]).toMatchObject({ rule: 'schema.additional_property', path: '/u0' });
  });
});

describe('schemaViolation', () => {
  const ajvError = (keyword: string, params: Record<string, unknown> = {}): ErrorObject => ({
    keyword,
    instancePath: '/story',
    schemaPath: `#/${keyword}`,
    params,
    message: 'must be valid',
  });

  it('falls back to schema.invalid for a keyword without a rule of its own', () => {
    expect(schemaViolation(ajvError('not'), '/payload')).toEqual({
      source: 'schema',
      rule: 'schema.invalid',
      message: '/payload/story must be valid',
      path: '/payload/story',
    });
  });

  it('maps a keyword with a rule to that rule', () => {
    expect(schemaViolation(ajvError('minLength', { limit: 1 }), '/payload').rule).toBe('schema.min_length');
  });

  it('has a rule for every keyword that can fail in the SOM schemas', () => {
    // Keywords that only annotate or apply subschemas never produce an error of their own.
    const structural = new Set(['$schema', '$id', '$defs', '$ref', 'title', 'description', 'properties', 'items']);
    const used = new Set<string>();
    const visit = (node: unknown, isSchema: boolean): void => {
      if (Array.isArray(node)) return node.forEach((item) => visit(item, isSchema));
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (isSchema) used.add(key);
        // Below properties and $defs come name → schema maps; below enum and required, plain data.
        if (key === 'properties' || key === '$defs') Object.values(value as object).forEach((schema) => visit(schema, true));
        else if (key === 'items') visit(value, true);
      }
    };
    [som.defs, som.envelope, ...Object.values(som.payloads)].forEach((schema) => visit(schema, true));
    const withoutRule = [...used].filter((keyword) => !structural.has(keyword) && !KEYWORD_RULES.has(keyword));
    expect(withoutRule).toEqual([]);
  });
});

function names(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `subgenre_${index}`);
}
