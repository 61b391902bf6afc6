/**
 * JSON Schema → fast-check arbitrary, for exactly the keywords the SOM 1.0 schemas use. Generated
 * values are valid by construction, so a schema change changes what is generated without anyone
 * editing a template; a keyword this converter does not know throws instead of being ignored (as ajv
 * runs in strict mode), so a schema that starts using one cannot silently yield invalid messages.
 */
import fc from 'fast-check';
import { som, type JsonSchemaDocument } from '@bus/schemas';

type Schema = Readonly<Record<string, unknown>>;

export interface SchemaArbitraryOptions {
  /** The latest date-time generated; every one lies in the window before it. */
  readonly now: Date;
}

/** How far before `now` a generated date-time can lie. Fixed, so the random draws do not depend on `now` (ids stay the same for a seed). */
export const DATE_TIME_WINDOW_MS = 7 * 24 * 60 * 60_000;

// Keywords that say nothing about valid values.
const ANNOTATIONS = new Set(['$schema', '$id', '$defs', 'title', 'description']);
const KEYWORDS = new Set([
  '$ref',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'const',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
]);

// I-JSON (parseIJson) refuses integers beyond ±(2^53 − 1), so an unbounded integer stays within them.
const SAFE_MIN = -Number.MAX_SAFE_INTEGER;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

// Building a stringMatching arbitrary parses its pattern, tens of milliseconds for some: built once per pattern.
const patternArbitraries = new Map<string, fc.Arbitrary<string>>();

/** The SOM 1.0 schema documents by $id, as libs/som's validator registers them (schema-set.ts). */
function somDocuments(): ReadonlyMap<string, JsonSchemaDocument> {
  return new Map([som.defs, som.envelope, ...Object.values(som.payloads)].map((document) => [document.$id, document]));
}

/** Converts schemas of the SOM 1.0 set; `$ref`s resolve against the set, across files. */
export class SchemaArbitraries {
  private readonly documents = somDocuments();
  private readonly formats: Readonly<Record<string, fc.Arbitrary<string>>>;
  // A $def is referenced from many places; its arbitrary is built once.
  private readonly converted = new WeakMap<Schema, fc.Arbitrary<unknown>>();

  constructor(options: SchemaArbitraryOptions) {
    const nowMs = options.now.getTime();
    this.formats = {
      // An offset back from now, so the draw is the same whatever `now` is.
      'date-time': fc.integer({ min: 0, max: DATE_TIME_WINDOW_MS }).map((offset) => new Date(nowMs - offset).toISOString()),
      // Unbiased: a biased draw favours a few small UUIDs, and ids must not repeat across seeds (runs).
      uuid: fc.noBias(fc.uuid({ version: 4 })),
      // https because the one uri the schemas have must be (its pattern filters the rest). Built from a
      // domain and unreserved path segments rather than fc.webUrl, whose percent-encoding tables take
      // seconds to build on first use.
      uri: fc
        .tuple(fc.domain({ size: 'small' }), fc.array(fc.stringMatching(/^[A-Za-z0-9._~-]+$/, { size: 'small' }), { maxLength: 4, size: 'small' }))
        .map(([domain, segments]) => `https://${domain}/${segments.join('/')}`),
    };
  }

  /** The envelope (its payload an empty object: the payload schema of message_type says the rest). */
  envelope(): fc.Arbitrary<Record<string, unknown>> {
    return this.convert(som.envelope, som.envelope.$id) as fc.Arbitrary<Record<string, unknown>>;
  }

  /** The payload of a message type. */
  payload(messageType: string): fc.Arbitrary<Record<string, unknown>> {
    if (!Object.hasOwn(som.payloads, messageType)) throw new RangeError(`No payload schema for ${messageType}`);
    const schema = som.payloads[messageType] as JsonSchemaDocument;
    return this.convert(schema, schema.$id) as fc.Arbitrary<Record<string, unknown>>;
  }

  /** `base` is the $id of the document `schema` is in, against which its $refs resolve. */
  private convert(schema: Schema, base: string): fc.Arbitrary<unknown> {
    let arbitrary = this.converted.get(schema);
    if (arbitrary === undefined) {
      arbitrary = this.build(schema, base);
      this.converted.set(schema, arbitrary);
    }
    return arbitrary;
  }

  private build(schema: Schema, base: string): fc.Arbitrary<unknown> {
    const unknown = Object.keys(schema).filter((keyword) => !KEYWORDS.has(keyword) && !ANNOTATIONS.has(keyword));
    if (unknown.length > 0) throw new Error(`The generator does not know the keyword(s) ${unknown.join(', ')} (in ${base})`);
    if (typeof schema['$ref'] === 'string') {
      const constraints = Object.keys(schema).filter((keyword) => keyword !== '$ref' && !ANNOTATIONS.has(keyword));
      if (constraints.length > 0) throw new Error(`The generator does not combine $ref with ${constraints.join(', ')} (in ${base})`);
      const target = this.resolve(schema['$ref'], base);
      return this.convert(target.schema, target.base);
    }
    if (Object.hasOwn(schema, 'const')) return fc.constant(schema['const']);
    if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
    switch (schema['type']) {
      case 'object':
        return this.object(schema, base);
      case 'array':
        return this.array(schema, base);
      case 'string':
        return this.string(schema);
      case 'integer':
        return integer(numberOr(schema['minimum'], SAFE_MIN), numberOr(schema['maximum'], SAFE_MAX));
      case 'number':
        return fc.double({ min: numberOr(schema['minimum'], -Number.MAX_VALUE), max: numberOr(schema['maximum'], Number.MAX_VALUE), noNaN: true });
      case 'boolean':
        return fc.boolean();
      default:
        throw new Error(`The generator does not know type ${JSON.stringify(schema['type'])} (in ${base})`);
    }
  }

  private object(schema: Schema, base: string): fc.Arbitrary<unknown> {
    const properties = (schema['properties'] ?? {}) as Readonly<Record<string, Schema>>;
    const required = (schema['required'] ?? []) as readonly string[];
    // Only declared properties are generated, so additionalProperties: false holds; a required one
    // without a schema could not be generated validly.
    const undeclared = required.filter((name) => !Object.hasOwn(properties, name));
    if (undeclared.length > 0) throw new Error(`Required but not declared: ${undeclared.join(', ')} (in ${base})`);
    const model = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, this.convert(property, base)]));
    // Optional properties are present or absent at random; plain prototypes, as JSON.parse makes.
    return fc.record(model, { requiredKeys: [...required], noNullPrototype: true });
  }

  private array(schema: Schema, base: string): fc.Arbitrary<unknown> {
    if (schema['items'] === undefined) throw new Error(`An array without items (in ${base})`);
    const items = this.convert(schema['items'] as Schema, base);
    const bounds = { minLength: numberOr(schema['minItems'], 0), maxLength: numberOr(schema['maxItems'], 2 ** 31 - 1), size: 'small' } as const;
    // ajv compares items deeply; the JSON text of a generated item is the same comparison.
    return schema['uniqueItems'] === true ? fc.uniqueArray(items, { ...bounds, selector: (item) => JSON.stringify(item) }) : fc.array(items, bounds);
  }

  private string(schema: Schema): fc.Arbitrary<string> {
    const minLength = numberOr(schema['minLength'], 0);
    const maxLength = numberOr(schema['maxLength'], 2 ** 31 - 1);
    const pattern = typeof schema['pattern'] === 'string' ? new RegExp(schema['pattern'], 'u') : undefined;
    const format = schema['format'];
    let values: fc.Arbitrary<string>;
    if (format !== undefined) {
      if (typeof format !== 'string' || !Object.hasOwn(this.formats, format)) throw new Error(`The generator does not know format ${String(format)}`);
      values = this.formats[format] as fc.Arbitrary<string>;
    } else if (pattern !== undefined) {
      // stringMatching reads the pattern without the u flag; the schemas' patterns are plain ASCII classes.
      values = patternArbitraries.get(pattern.source) ?? fc.stringMatching(new RegExp(pattern.source), { size: 'small' });
      patternArbitraries.set(pattern.source, values);
    } else {
      values = fc.string({ minLength, maxLength, size: 'small' });
    }
    // A pattern or format does not know the length bounds, nor a format the pattern: filtered, which
    // the SOM schemas' small bounds and matching formats make rare.
    return values.filter((value) => {
      const length = [...value].length;
      return length >= minLength && length <= maxLength && (pattern === undefined || pattern.test(value));
    });
  }

  private resolve(ref: string, base: string): { schema: Schema; base: string } {
    const url = new URL(ref, base);
    const fragment = decodeURIComponent(url.hash.replace(/^#/, ''));
    url.hash = '';
    const document = this.documents.get(url.href);
    if (document === undefined) throw new Error(`$ref ${ref} (from ${base}) names no SOM 1.0 document`);
    let node: unknown = document;
    for (const token of fragment.split('/').slice(1)) {
      const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
      node = typeof node === 'object' && node !== null && Object.hasOwn(node, key) ? (node as Schema)[key] : undefined;
    }
    if (typeof node !== 'object' || node === null) throw new Error(`$ref ${ref} (from ${base}) does not resolve`);
    return { schema: node as Schema, base: url.href };
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

function integer(min: number, max: number): fc.Arbitrary<number> {
  if (min >= INT32_MIN && max <= INT32_MAX) return fc.integer({ min, max });
  // fc.integer is 32-bit; byte counts (up to 10 GiB) and unbounded integers need more.
  return fc.bigInt({ min: BigInt(Math.max(min, SAFE_MIN)), max: BigInt(Math.min(max, SAFE_MAX)) }).map(Number);
}
