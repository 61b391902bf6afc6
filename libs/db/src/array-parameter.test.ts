import fc from 'fast-check';
import { arrayParameter } from './array-parameter';

/** pg's own conversion of a JS array parameter (pg/lib/utils arrayString), written plainly: what Postgres got before. */
function pgArrayString(values: ReadonlyArray<string | number | null>): string {
  const element = (v: string | number | null) => (v === null ? 'NULL' : `"${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
  return `{${values.map(element).join(',')}}`;
}

describe('arrayParameter', () => {
  it('quotes every element, escapes quotes and backslashes, and writes NULL for null', () => {
    expect(arrayParameter(['a', 'b c', 'NULL', '', null, 7, -1.5])).toBe('{"a","b c","NULL","",NULL,"7","-1.5"}');
    expect(arrayParameter(['say "hi"', 'back\\slash', '{,}'])).toBe('{"say \\"hi\\"","back\\\\slash","{,}"}');
    expect(arrayParameter([])).toBe('{}');
  });

  it('is the text pg sent for the same array, for any strings, numbers and nulls', () => {
    const awkward = fc.string({ unit: fc.constantFrom('"', '\\', ',', '{', '}', ' ', 'NULL', 'é', '😀', 'a') });
    const element = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), awkward, fc.integer(), fc.double({ noNaN: true }), fc.constant(null));
    fc.assert(
      fc.property(fc.array(element, { maxLength: 12 }), (values) => {
        expect(arrayParameter(values)).toBe(pgArrayString(values));
      }),
      { numRuns: 2000 },
    );
  });
});
