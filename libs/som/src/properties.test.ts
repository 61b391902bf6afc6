/**
 * Properties over random mutations of the valid examples: validation never throws, every path it
 * reports resolves in the submitted message (see pathResolves), and the same input always gives the
 * same result.
 */
import fc from 'fast-check';
import { MESSAGE_TYPES } from './schema-set';
import { jsonPointer } from '@bus/contracts';
import { example, type Json, pathResolves, REMOVE, setAt, testValidator, tokensOf } from './testing';
import type { SomValidation } from './validator';

const validator = testValidator();

/** Every location in a JSON document, as a JSON Pointer ('' is the document). */
function locations(node: unknown, at = ''): string[] {
  if (typeof node !== 'object' || node === null) return [at];
  return [at, ...Object.keys(node).flatMap((key) => locations((node as Json)[key], jsonPointer(at, key)))];
}

function valueAt(document: unknown, at: string): unknown {
  return tokensOf(at).reduce<unknown>((node, token) => (typeof node === 'object' && node !== null ? (node as Json)[token] : undefined), document);
}

/** A mutation of one location, chosen by `pick` among the locations the document has by then. */
type Mutation = { kind: 'set' | 'remove' | 'add'; pick: number; key: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('set', 'remove', 'add'),
  pick: fc.nat(),
  // Keys that JSON Pointer must escape, and ones that name Object.prototype members, on purpose.
  key: fc.oneof(fc.string(), fc.constantFrom('a/b', 'x~y', '__proto__', 'constructor', 'toString', 'payload')),
  value: fc.jsonValue({ maxDepth: 3 }),
});

/** Applies mutations in place; setting the root replaces the document, possibly by a non-object. */
function mutate(document: unknown, mutations: readonly Mutation[]): unknown {
  let current = document;
  for (const { kind, pick, key, value } of mutations) {
    const all = locations(current);
    const at = all[pick % all.length] ?? '';
    if (kind === 'set' && at === '') current = value;
    else if (kind === 'set') setAt(current, at, value);
    else if (kind === 'remove' && at !== '') setAt(current, at, REMOVE);
    else if (kind === 'add' && isObject(valueAt(current, at))) setAt(current, jsonPointer(at, key), value);
  }
  return current;
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const mutatedMessage = fc
  .tuple(fc.constantFrom(...MESSAGE_TYPES), fc.array(mutation, { minLength: 1, maxLength: 6 }))
  .map(([type, mutations]) => mutate(example(type), mutations));

function unresolvedPaths(submitted: unknown, result: SomValidation): string[] {
  return [...result.violations, ...result.tolerated].flatMap(({ rule, path }) =>
    path === undefined || !pathResolves(submitted, path, rule) ? [`${rule} at ${String(path)}`] : [],
  );
}

describe('validation of mutated examples', () => {
  it('never throws, and every violation has a path that resolves in the submitted message', () => {
    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(mutatedMessage, (submitted) => {
        const result = validator.validate(submitted);
        outcomes[result.ok ? 'accepted' : 'refused'] += 1;
        expect(unresolvedPaths(submitted, result)).toEqual([]);
      }),
      { numRuns: 500 },
    );
    // The mutations are neither all harmless nor all fatal, or the property would prove little.
    expect(outcomes.accepted).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(outcomes.accepted);
  });

  it('is deterministic: a copy, and another validator, give the same result', () => {
    const other = testValidator();
    fc.assert(
      fc.property(mutatedMessage, (submitted) => {
        const first = validator.validate(submitted);
        expect(validator.validate(structuredClone(submitted))).toEqual(first);
        expect(other.validate(submitted)).toEqual(first);
      }),
      { numRuns: 200 },
    );
  });

  it('never changes the submitted message', () => {
    fc.assert(
      fc.property(mutatedMessage, (submitted) => {
        const before = structuredClone(submitted);
        validator.validate(submitted);
        expect(submitted).toEqual(before);
      }),
    );
  });
});

describe('validation of arbitrary bodies', () => {
  it('never throws on random bytes, nor accepts them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (body) => {
        const result = validator.validateBytes(body);
        expect(result.ok).toBe(false);
      }),
    );
  });

  it('never throws on an example with text spliced into its JSON', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MESSAGE_TYPES), fc.nat(), fc.string(), (type, at, text) => {
        const json = JSON.stringify(example(type));
        const cut = at % (json.length + 1);
        const body = new TextEncoder().encode(json.slice(0, cut) + text + json.slice(cut));
        const result = validator.validateBytes(body);
        if (result.violations[0]?.rule !== 'schema.json_invalid') {
          expect(unresolvedPaths(JSON.parse(new TextDecoder().decode(body)), result)).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
