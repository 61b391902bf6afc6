import fc from 'fast-check';
import { bodyDigest, canonicalJson, contentHash } from './content-hash';

/** The definition canonicalJson must keep to the byte (every stored hash depends on it), written plainly. */
function referenceCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${referenceCanonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

describe('content hash', () => {
  it('is the same for the same JSON value whatever the key order and whitespace', () => {
    const a = JSON.parse('{"b": 1, "a": {"y": [1, 2, {"q": true, "p": null}], "x": "é"}}') as unknown;
    const b = JSON.parse('{"a":{"x":"é","y":[1,2,{"p":null,"q":true}]},"b":1}') as unknown;
    expect(contentHash(a)).toBe(contentHash(b));
    expect(canonicalJson(a)).toBe('{"a":{"x":"é","y":[1,2,{"p":null,"q":true}]},"b":1}');
  });

  it('differs when any value, array order or key differs', () => {
    const base = { a: [1, 2], b: 'x' };
    const hash = contentHash(base);
    expect(contentHash({ a: [2, 1], b: 'x' })).not.toBe(hash);
    expect(contentHash({ a: [1, 2], b: 'y' })).not.toBe(hash);
    expect(contentHash({ a: [1, 2], c: 'x' })).not.toBe(hash);
    expect(contentHash({ a: [1, 2], b: 'x', c: null })).not.toBe(hash);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the hash stored for this value before the serialiser was rewritten (escapes, surrogates, integer-like keys)', () => {
    const value = JSON.parse(
      '{"z":["\\ud83d\\ude00 é","\\ud800","a\\"b\\\\c\\n\\u0001\\u007f\\u2028"],"10":1.5e300,"9":-0,"":{"b":null,"a":[true,false,{}]},"__proto__":0}',
    ) as unknown;
    expect(contentHash(value)).toBe('bd9d8f0e9d11025a59c6a1d519a68c1050fe8e7a4f967a3dd7375355494ba408');
  });

  it("sorts objects of many keys as objects of few (either side of the insertion sort's bound)", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.integer(), { minKeys: 10, maxKeys: 40 }), (object) => {
        const parsed = JSON.parse(JSON.stringify(object)) as unknown;
        expect(canonicalJson(parsed)).toBe(referenceCanonicalJson(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('digests the exact bytes as SHA-256 (the body_sha256 stored at acceptance)', () => {
    expect(bodyDigest(Buffer.from('abc')).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(bodyDigest(new Uint8Array(0)).toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('serialises every JSON value exactly as the plain definition does', () => {
    // Every kind of character the quoting treats apart: escapes, high and low surrogates (paired or lone), and plain ones.
    const awkward = fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', '\u2028', '\ud83d', '\ude00', 'é', 'a', '😀') });
    const text = fc.oneof(fc.string({ unit: 'binary' }), awkward, fc.string());
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        text,
        tie('array'),
        tie('object'),
      ),
      array: fc.array(tie('value'), { maxLength: 6 }),
      object: fc.dictionary(text, tie('value'), { maxKeys: 6 }),
    }));
    fc.assert(
      fc.property(json.value, (value) => {
        // Through JSON.parse, as the gateway and delivery get their values (own data properties, "__proto__" included).
        const parsed = JSON.parse(JSON.stringify(value)) as unknown;
        expect(canonicalJson(parsed)).toBe(referenceCanonicalJson(parsed));
      }),
      { numRuns: 2000 },
    );
  });
});
