import { canonicalJson, contentHash } from './content-hash';

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
});
