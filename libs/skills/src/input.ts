import { parseDocument } from 'yaml';
import { describeType, isPlainObject } from './kinds';
import type { SkillsInput } from './check';

/** A validation body is at most 256 KB (docs/api.md#skill-catalogue, #limits): 262,144 bytes. */
export const MAX_BODY_BYTES = 256 * 1024;

export type ReadBody = { ok: true; input: SkillsInput } | { ok: false; reason: string };

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;
const YAML_TYPE = /^(?:application|text)\/(?:x-)?yaml$|^application\/[a-z0-9.+-]+\+yaml$/;
const FORMS = ['instance', 'skills', 'yaml'] as const;

/**
 * Reads a POST /api/skills/validate body (docs/api.md#skill-catalogue) into what it asks to check, or says why it is
 * unreadable (400 skills.unreadable): empty, over 256 KB, not UTF-8, neither JSON nor YAML, or no
 * skills: section. JSON forms: {instance}, {skills: [...]}, a bare array, {yaml: text}. A YAML body
 * (application/yaml) is a skills file: a mapping with a skills: section, or a bare list. Without a
 * JSON or YAML Content-Type the body is read as JSON if it parses, else as YAML.
 *
 * The reasons never quote the body: it is neither stored nor logged, and an error message can end up
 * in either.
 */
export function readSkillsBody(body: Uint8Array, contentType: string | undefined): ReadBody {
  if (body.byteLength > MAX_BODY_BYTES) return unreadable(`The body is over ${MAX_BODY_BYTES} bytes (256 KB)`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    return unreadable('The body is not UTF-8 text');
  }
  if (text.trim() === '') return unreadable('The body is empty');

  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (JSON_TYPE.test(mediaType)) {
    const parsed = parseJson(text);
    return parsed.ok ? fromJson(parsed.value) : unreadable(`The body is not JSON (Content-Type ${mediaType})`);
  }
  if (YAML_TYPE.test(mediaType)) return fromYaml(text, 'The body');
  const parsed = parseJson(text);
  if (parsed.ok) return fromJson(parsed.value);
  const yaml = fromYaml(text, 'The body');
  if (!yaml.ok && yaml.reason.startsWith('The body is not YAML')) return unreadable('The body is neither JSON nor YAML');
  return yaml;
}

function fromJson(value: unknown): ReadBody {
  if (Array.isArray(value)) return { ok: true, input: { checked: 'list', items: value } };
  if (!isPlainObject(value)) return unreadable(`The body is JSON ${describeType(value)}, not an object with instance, skills or yaml, nor a list`);
  const present = FORMS.filter((k) => Object.hasOwn(value, k));
  const [form, ...others] = present;
  if (form === undefined) return unreadable('The body has none of instance, skills or yaml, and is not a list');
  if (others.length > 0) return unreadable(`The body has ${present.join(' and ')}: send one of instance, skills or yaml`);
  switch (form) {
    case 'instance':
      return { ok: true, input: { checked: 'instance', instance: value.instance } };
    case 'skills':
      return { ok: true, input: { checked: 'list', items: value.skills } };
    case 'yaml': {
      const yaml = value.yaml;
      if (typeof yaml !== 'string') return unreadable(`yaml must be the text of a skills file, got ${describeType(yaml)}`);
      if (yaml.trim() === '') return unreadable('The yaml text is empty');
      return fromYaml(yaml, 'The yaml text');
    }
  }
}

/** A skills file: a mapping with a skills: section (null reads as an empty list), or a bare list. */
function fromYaml(text: string, what: string): ReadBody {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  } catch {
    return unreadable(`${what} is not YAML (too deeply nested)`);
  }
  const error = doc.errors[0];
  if (error) {
    const at = error.linePos?.[0];
    return unreadable(`${what} is not YAML (${error.code}${at ? ` at line ${at.line}, column ${at.col}` : ''})`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return unreadable(`${what} is not YAML (too many aliases)`);
  }
  if (Array.isArray(value)) return { ok: true, input: { checked: 'file', items: value } };
  if (isPlainObject(value) && Object.hasOwn(value, 'skills')) {
    return { ok: true, input: { checked: 'file', items: value.skills ?? [] } };
  }
  return unreadable(`${what} has no skills: section and is not a list`);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const unreadable = (reason: string): ReadBody => ({ ok: false, reason });
