import type { SkillField } from './model';

/** What a field check may consult besides the value. */
export interface FieldContext {
  /** The dot paths of SOM 1.0 story.context. */
  storyPaths: ReadonlySet<string>;
  /** The instance's authority scale when it has a readable one, else null. */
  authorityScale: readonly string[] | null;
}

export interface FieldKind {
  /** How a field of this kind is checked: the library answer's field_kinds (docs/api.md#skill-library). */
  description: string;
  /** Problems of `value` (never undefined) as the value of `field`; `at` names it, e.g. values.voice_path. */
  check(value: unknown, field: SkillField, at: string, ctx: FieldContext): string[];
}

/** An authority or other snake_case name, as SOM 1.0 writes them (defs.json `name`). */
export const SNAKE_CASE_NAME = /^[a-z][a-z0-9_]*$/;
const TEXT_MAX = 200;

/**
 * Text cut to at most `max` code points, the last three `...` when cut: by code points, so the cut
 * never splits a surrogate pair into a lone surrogate no JSON reader takes.
 */
export function cut(text: string, max: number): string {
  const codePoints = [...text];
  return codePoints.length > max ? `${codePoints.slice(0, max - 3).join('')}...` : text;
}

/** A value quoted for a one-line problem: JSON, so line breaks stay escaped, and cut when long. */
export function quote(value: unknown): string {
  return cut(JSON.stringify(value) ?? String(value), 60);
}

/** What a value is, for "must be ..., got ..." problems. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  const kind = typeof value;
  switch (kind) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true/false';
    case 'object':
      return 'an object';
    // Not JSON values: a YAML or JSON document cannot hold them, so typeof's own name will do.
    case 'bigint':
    case 'function':
    case 'symbol':
    case 'undefined':
      return kind;
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkPath(value: unknown, at: string, ctx: FieldContext): string[] {
  if (typeof value !== 'string') return [`${at} must be a dot path on story.context, got ${describeType(value)}`];
  if (!ctx.storyPaths.has(value)) return [`${at}: ${quote(value)} is not a path of SOM 1.0 story.context`];
  return [];
}

function checkList(value: unknown, at: string, what: string, item: (v: unknown, at: string) => string[]): string[] {
  if (!Array.isArray(value)) return [`${at} must be a list of ${what}, got ${describeType(value)}`];
  const problems: string[] = [];
  const seen = new Set<string>();
  value.forEach((v, i) => {
    const itemProblems = item(v, `${at}[${i}]`);
    problems.push(...itemProblems);
    if (itemProblems.length === 0 && typeof v === 'string') {
      if (seen.has(v)) problems.push(`${at}[${i}]: ${quote(v)} is listed twice`);
      seen.add(v);
    }
  });
  return problems;
}

function checkEnum(value: unknown, field: SkillField, at: string): string[] {
  if (typeof value !== 'string' || !field.options.includes(value)) {
    const got = typeof value === 'string' ? quote(value) : describeType(value);
    return [`${at}: ${got} is not one of ${field.options.join(', ')}`];
  }
  return [];
}

/**
 * Every field kind the checker knows. The library answer's field_kinds lists the kinds its skills
 * use, with these descriptions; a library whose skills use another kind is refused at load.
 */
export const FIELD_KINDS: Readonly<Record<string, FieldKind>> = {
  path: {
    description:
      'A dot path on the SOM 1.0 story.context payload, e.g. audience.age_band; an array step addresses every element, e.g. characters.voice.voice_id. The path must exist in the story.context schema.',
    check: (value, _field, at, ctx) => checkPath(value, at, ctx),
  },
  path_list: {
    description: 'A list of distinct dot paths on the SOM 1.0 story.context payload, each checked as a path.',
    check: (value, _field, at, ctx) => {
      const problems = checkList(value, at, 'dot paths on story.context', (v, itemAt) => checkPath(v, itemAt, ctx));
      if (problems.length === 0 && Array.isArray(value) && value.length === 0) return [`${at} must list at least one path`];
      return problems;
    },
  },
  enum: {
    description: "One of the field's options, exactly as written.",
    check: (value, field, at) => checkEnum(value, field, at),
  },
  enum_list: {
    description: "A list of distinct values, each one of the field's options; may be empty.",
    check: (value, field, at) => checkList(value, at, field.options.join(', '), (v, itemAt) => checkEnum(v, field, itemAt)),
  },
  row: {
    description: "An object whose keys are among the field's options (at least one), each with a string, number or true/false value.",
    check: (value, field, at) => {
      if (!isPlainObject(value)) return [`${at} must be an object with keys among ${field.options.join(', ')}, got ${describeType(value)}`];
      const keys = Object.keys(value);
      if (keys.length === 0) return [`${at} must have at least one of the keys ${field.options.join(', ')}`];
      const problems: string[] = [];
      for (const key of keys) {
        if (!field.options.includes(key)) {
          problems.push(`${at}: ${quote(key)} is not a key of this row (keys: ${field.options.join(', ')})`);
          continue;
        }
        const v = value[key];
        const scalar = typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
        if (!scalar) problems.push(`${at}.${key} must be a string, number or true/false, got ${describeType(v)}`);
      }
      return problems;
    },
  },
  authority: {
    description: "An authority name from the instance's own authority_scale, e.g. editor.",
    check: (value, _field, at, ctx) => {
      if (typeof value !== 'string') return [`${at} must be an authority name, got ${describeType(value)}`];
      if (ctx.authorityScale === null) return [`${at}: ${quote(value)} cannot be checked: the instance has no valid authority_scale`];
      if (!ctx.authorityScale.includes(value)) {
        return [`${at}: ${quote(value)} is not on the instance's authority_scale (${ctx.authorityScale.join(', ')})`];
      }
      return [];
    },
  },
  integer: {
    description: 'A whole number, 0 or more.',
    check: (value, _field, at) => {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        const got = typeof value === 'number' ? quote(value) : describeType(value);
        return [`${at} must be a whole number, 0 or more, got ${got}`];
      }
      return [];
    },
  },
  text: {
    description: `One line of text, 1 to ${TEXT_MAX} characters.`,
    check: (value, _field, at) => {
      if (typeof value !== 'string') return [`${at} must be text, got ${describeType(value)}`];
      if (value.length === 0 || value.length > TEXT_MAX || /[\r\n]/.test(value)) return [`${at} must be one line of 1 to ${TEXT_MAX} characters`];
      return [];
    },
  },
};
