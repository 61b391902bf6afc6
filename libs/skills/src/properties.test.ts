import fc from 'fast-check';
import { checkSkillsInput } from './check';
import { readSkillsBody } from './input';
import { loadSkillLibrary } from './library';
import { VALID } from './testing';

const library = loadSkillLibrary();

/** A valid instance with one member, value, field value or scale replaced by an arbitrary JSON value. */
const mutated = fc
  .tuple(
    fc.constantFrom(...Object.values(VALID)),
    fc.constantFrom('skill_id', 'skill_version', 'instance_label', 'values', 'authority_scale', 'consumer', 'extra', '__proto__', 'value'),
    fc.jsonValue(),
  )
  .map(([base, key, value]) => {
    const copy = structuredClone(base) as Record<string, unknown>;
    if (key === 'value') {
      const values = { ...(copy.values as Record<string, unknown>) };
      const names = Object.keys(values);
      values[names[0] ?? 'x'] = value;
      copy.values = values;
    } else {
      Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true });
    }
    return copy;
  });

describe('the checker on arbitrary input', () => {
  it('never throws, answers one-line problems, and answers the same input the same way', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(mutated, fc.jsonValue()), { maxLength: 8 }), (items) => {
        const answer = checkSkillsInput(library, { checked: 'list', items });
        const problems = [...answer.problems, ...answer.instances.flatMap((i) => i.problems)];
        for (const p of problems) expect(p).toMatch(/^[^\r\n]+$/);
        expect(answer.valid).toBe(answer.instances.every((i) => i.valid && i.problems.length === 0));
        expect(checkSkillsInput(library, { checked: 'list', items: structuredClone(items) })).toEqual(answer);
      }),
      { numRuns: 300 },
    );
  });

  it('reads any bytes without throwing, and any failure is a one-line reason', () => {
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.string().map((s) => new TextEncoder().encode(s)),
      fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v))),
    );
    const type = fc.constantFrom(undefined, 'application/json', 'application/yaml', 'text/plain', 'text/yaml; charset=utf-8');
    fc.assert(
      fc.property(body, type, (bytes, contentType) => {
        const read = readSkillsBody(bytes, contentType);
        if (!read.ok) expect(read.reason).toMatch(/^[^\r\n]+$/);
        else checkSkillsInput(library, read.input);
      }),
      { numRuns: 500 },
    );
  });
});
