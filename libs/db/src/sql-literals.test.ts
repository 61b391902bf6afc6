import fc from 'fast-check';
import { escapeLiteral } from 'pg';
import { sqlIdentifier, sqlLiteral, sqlTextArray } from './sql-literals';

describe('sqlLiteral', () => {
  it('quotes a plain value', () => {
    expect(sqlLiteral('c-1:a.b_c')).toBe(`'c-1:a.b_c'`);
  });

  it('doubles quotes, and escapes backslashes in an E-string', () => {
    expect(sqlLiteral(`it's`)).toBe(`'it''s'`);
    expect(sqlLiteral(`a\\'; drop table x; --`)).toBe(` E'a\\\\''; drop table x; --'`);
  });

  it('refuses a NUL, which would end the query text early', () => {
    expect(() => sqlLiteral('a\u0000b')).toThrow(RangeError);
    expect(() => sqlLiteral(`it's\u0000`)).toThrow(RangeError);
  });

  it("is pg's escapeLiteral for every value without a NUL, plain or not", () => {
    const awkward = fc.string({ unit: fc.constantFrom("'", '\\', 'E', ' ', 'é', '😀', '\ud800', 'a', '-') });
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), awkward), (value) => {
        fc.pre(!value.includes('\u0000'));
        expect(sqlLiteral(value)).toBe(escapeLiteral(value));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('sqlTextArray', () => {
  it('is a typed array of literals, empty ones included', () => {
    expect(sqlTextArray(['a', `b'c`])).toBe(`array['a', 'b''c']::text[]`);
    expect(sqlTextArray([])).toBe('array[]::text[]');
  });
});

describe('sqlIdentifier', () => {
  it('quotes a name, doubling its quotes, and refuses a NUL', () => {
    expect(sqlIdentifier('pull.receive@1')).toBe('"pull.receive@1"');
    expect(sqlIdentifier('a"b')).toBe('"a""b"');
    expect(() => sqlIdentifier('a\u0000b')).toThrow(RangeError);
  });
});
