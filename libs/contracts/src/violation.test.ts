import fc from 'fast-check';
import { ANSWER_VIOLATION_BOUNDS, boundViolations, type Violation } from './violation';

const many = (count: number, text: string): Violation[] =>
  Array.from({ length: count }, (_, i) => ({ source: 'schema', rule: 'schema.additional_property', message: `${text}${i}`, path: `/${text}${i}` }));

describe('boundViolations', () => {
  it('keeps a short list as it is', () => {
    const found = many(3, 'x');
    expect(boundViolations(found, ANSWER_VIOLATION_BOUNDS)).toEqual({ violations: found, omitted: 0 });
  });

  it('keeps the first maxCount and counts the rest', () => {
    const { violations, omitted } = boundViolations(many(29_981, 'x'), ANSWER_VIOLATION_BOUNDS);
    expect(violations.map((v) => v.message)).toEqual(many(50, 'x').map((v) => v.message));
    expect(omitted).toBe(29_931);
  });

  it('cuts long messages and paths, marking the cut', () => {
    const [v] = boundViolations(many(1, 'y'.repeat(10_000)), ANSWER_VIOLATION_BOUNDS).violations;
    expect(v?.message).toHaveLength(500);
    expect(v?.message.endsWith('…')).toBe(true);
    expect(v?.path).toHaveLength(500);
  });

  it('stays within maxBytes of JSON whatever the characters, keeping at least one', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), fc.integer({ min: 1, max: 200 }), (text, count) => {
        const { violations, omitted } = boundViolations(many(count, text), ANSWER_VIOLATION_BOUNDS);
        expect(violations.length).toBeGreaterThanOrEqual(1);
        expect(violations.length + omitted).toBe(count);
        expect(Buffer.byteLength(JSON.stringify(violations))).toBeLessThanOrEqual(ANSWER_VIOLATION_BOUNDS.maxBytes);
      }),
      { numRuns: 50 },
    );
  });
});
