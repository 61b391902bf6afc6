import { quote } from './kinds';

describe('quote', () => {
  it('cuts a long value by code points, never leaving half a surrogate pair (found by schemathesis)', () => {
    // 56 characters, then emoji (two UTF-16 units each) across the cut at 57.
    const quoted = quote(`${'a'.repeat(55)}${'😀'.repeat(10)}`);
    expect(quoted).toBe(`"${'a'.repeat(55)}😀...`);
    expect(/\p{Cs}/u.test(quoted)).toBe(false);
  });

  it('leaves a short value whole', () => {
    expect(quote('senior editor')).toBe('"senior editor"');
  });
});
