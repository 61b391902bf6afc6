import fc from 'fast-check';
import { MAX_JSON_DEPTH, ijsonProblem, isPlainlyIJson, parseIJson } from './strict-json';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function refusal(text: string): { code: string; path?: string } | null {
  const found = ijsonProblem(text);
  return found === null ? null : { code: found.code, ...(found.path === undefined ? {} : { path: found.path }) };
}

function nested(depth: number, inner = '1'): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

/** JSON values as JSON.stringify writes them: unique names, safe integers, well-formed strings. */
const wellFormed = fc.jsonValue({ maxDepth: 6, stringUnit: 'grapheme' }).filter((value) => !JSON.stringify(value).match(/\d{16,}/));

describe('the acceptance contract (I-JSON) beyond JSON.parse', () => {
  it('accepts whatever JSON.stringify writes for well-formed values, in any whitespace', () => {
    fc.assert(
      fc.property(wellFormed, fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        expect(refusal(JSON.stringify(value, null, indent))).toBeNull();
      }),
    );
  });

  it('refuses a member name given twice in one object, wherever the object is, with the path of the second', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'payload', 'x/y', ''), { maxLength: 5 }), fc.string({ maxLength: 8 }), (trail, name) => {
        // {"t0":{"t1":…{name:1,name:2}…}}
        const inner = `{${JSON.stringify(name)}:1,${JSON.stringify(name)}:2}`;
        const text = trail.reduceRight((acc, key) => `{${JSON.stringify(key)}:${acc}}`, inner);
        const found = refusal(text);
        expect(found?.code).toBe('json_duplicate_name');
        const escaped = [...trail, name].map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
        expect(found?.path).toBe(escaped);
      }),
    );
  });

  it('compares names after unescaping, as readers do', () => {
    expect(refusal('{"system_id":"storyteller.web","system_\\u0069d":"demo.studio"}')).toEqual({ code: 'json_duplicate_name', path: '/system_id' });
    expect(refusal('{"a\\/b":1,"a/b":2}')?.code).toBe('json_duplicate_name');
  });

  it('allows the same name in different objects, and in arrays of objects', () => {
    expect(refusal('{"a":{"a":1},"b":[{"a":1},{"a":2}]}')).toBeNull();
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels, at any depth of the input, without exhausting the stack`, () => {
    expect(refusal(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(refusal(nested(MAX_JSON_DEPTH + 1))?.code).toBe('json_too_deep');
    expect(refusal(nested(100_000))?.code).toBe('json_too_deep');
    const deepObject = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(refusal(deepObject)).toEqual({ code: 'json_too_deep', path: '/a'.repeat(MAX_JSON_DEPTH) });
  });

  it('refuses integers beyond ±(2^53 − 1) and numbers too large for a double; keeps the rest', () => {
    expect(refusal('{"n":9007199254740991}')).toBeNull();
    expect(refusal('{"n":-9007199254740991}')).toBeNull();
    expect(refusal('{"n":9007199254740992}')).toEqual({ code: 'json_number_unsafe', path: '/n' });
    expect(refusal('[1,-12345678901234567890123]')).toEqual({ code: 'json_number_unsafe', path: '/1' });
    expect(refusal('{"n":1e400}')?.code).toBe('json_number_unsafe');
    expect(refusal('{"n":-1.5E+309}')?.code).toBe('json_number_unsafe');
    // Doubles: every reader reads them as the same double.
    expect(refusal('{"n":1e300,"m":12345678901234567890.5,"k":0.1000000000000000000001,"z":-0}')).toBeNull();
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (n) => {
        const safe = n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER);
        expect(refusal(`{"n":${n}}`)?.code ?? 'none').toBe(safe ? 'none' : 'json_number_unsafe');
      }),
    );
  });

  it('refuses escaped lone surrogates in values and names; keeps pairs and escaped backslashes', () => {
    expect(refusal('{"t":"\\ud83d\\ude00"}')).toBeNull();
    expect(refusal('{"t":"\\\\ud800"}')).toBeNull();
    expect(refusal('{"t":"a\\ud800"}')).toEqual({ code: 'json_string_invalid', path: '/t' });
    expect(refusal('{"t":"\\udc00x"}')?.code).toBe('json_string_invalid');
    expect(refusal('{"t":"\\ud800\\n\\udc00"}')?.code).toBe('json_string_invalid');
    expect(refusal('{"t":"\\ud800\\ud800\\udc00"}')?.code).toBe('json_string_invalid');
    expect(refusal('{"\\ud800":1}')).toEqual({ code: 'json_string_invalid', path: '' });
    expect(refusal('["ok","\\udfff"]')).toEqual({ code: 'json_string_invalid', path: '/1' });
  });
});

describe('parseIJson', () => {
  const body = (text: string) => Buffer.from(text, 'utf8');

  it('refuses a byte order mark rather than dropping it', () => {
    const parsed = parseIJson(Buffer.concat([BOM, body('{"a":1}')]));
    expect(!parsed.ok && parsed.problem.code).toBe('json_bom');
  });

  it('refuses what JSON.parse refuses, then what I-JSON refuses, and parses the rest', () => {
    const code = (text: string) => {
      const parsed = parseIJson(body(text));
      return parsed.ok ? 'ok' : parsed.problem.code;
    };
    expect(code('{"a":')).toBe('json_invalid');
    expect(code('{"a":1,"a":1}')).toBe('json_duplicate_name');
    expect(code(nested(10_000))).toBe('json_too_deep');
    expect(code('{"a":"\\u0000 is fine"}')).toBe('ok');
    expect(parseIJson(Buffer.from([0x7b, 0xff, 0x7d])).ok).toBe(false);
  });

  it('gives every reader the value JSON.parse gives, for whatever it accepts', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const parsed = parseIJson(body(text));
        if (parsed.ok) expect(parsed.value).toEqual(JSON.parse(text));
      }),
    );
  });
});

describe('isPlainlyIJson, the quick check before the full one', () => {
  // JSON texts where every problem is common: names from a small set (an escaped one equal to a plain
  // one), numbers past 2^53 or a double, lone and paired surrogate escapes.
  const texts = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, tie('number'), tie('string'), tie('object'), tie('array')),
    number: fc.constantFrom('0', '-0', '1.5', '-12', '123456789012345', '9007199254740991', '9007199254740993', '-9007199254740993', '1e400', '2.5e-3'),
    string: fc.constantFrom('"x"', '""', '"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"a\\\\"', '"\\""', '"\\u0061"', '"é😀"'),
    name: fc.constantFrom('"a"', '"b"', '"\\u0061"', '"a\\/b"', '"a/b"', '"__proto__"', '"10"', '"9"'),
    object: fc
      .array(fc.tuple(tie('name'), tie('value')), { maxLength: 4 })
      .map((members) => `{${members.map(([n, v]) => `${n as string}:${v as string}`).join(',')}}`),
    array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(' , ')}]`),
  }));

  it('says "plainly I-JSON" exactly when the full check finds no problem', () => {
    fc.assert(
      fc.property(texts.value, (text) => {
        const value = JSON.parse(text as string) as unknown;
        expect(isPlainlyIJson(text as string, value)).toBe(ijsonProblem(text as string) === null);
      }),
      { numRuns: 3000 },
    );
  });

  it('counts own keys only: an enumerable property on Object.prototype does not hide a duplicate', () => {
    const text = '{"a":1,"a":2}';
    const value = JSON.parse(text) as unknown;
    Object.defineProperty(Object.prototype, 'polluted', { value: 1, enumerable: true, configurable: true });
    try {
      expect(isPlainlyIJson(text, value)).toBe(false);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it('leaves deep nesting to the full check without walking it', () => {
    expect(isPlainlyIJson(nested(MAX_JSON_DEPTH), JSON.parse(nested(MAX_JSON_DEPTH)))).toBe(true);
    expect(isPlainlyIJson(nested(100_000), JSON.parse(nested(100_000)))).toBe(false);
  });
});
