import { FIELD_KINDS, SNAKE_CASE_NAME, cut, describeType, isPlainObject, quote, type FieldContext } from './kinds';
import type { SkillLibrary } from './library';
import type { Checked, InstanceResult, ValidationAnswer } from './model';

/** A list holds at most this many instances (docs/api.md#skill-catalogue, #limits); more gives a top-level problem. */
export const MAX_INSTANCES = 200;
const LABEL_MAX = 200;

/*
 * The answer's size is bounded whatever the input (docs/skills.md#the-answers-size): an instance
 * lists its first problems only, at most PROBLEMS_LISTED and within PROBLEMS_BYTES of the answer's
 * JSON, then one line counting the rest; a line is cut at PROBLEM_MAX_CHARS, short enough that the
 * first always fits; the label and skill id an instance echoes are cut too.
 */
export const PROBLEMS_LISTED = 10;
export const PROBLEMS_BYTES = 1536;
export const PROBLEM_MAX_CHARS = 250;
/** A carried skill id is far shorter; a longer one is not a skill, and is echoed cut. */
export const SKILL_ID_ECHO_MAX = 100;
/** An instance_label used more than once names this many of the instances that use it. */
const SHARED_LABEL_INDEXES = 10;
const INSTANCE_KEYS = ['skill_id', 'skill_version', 'instance_label', 'values', 'authority_scale', 'consumer'];

/** What a validation request asked to check, once its body is read (see readSkillsBody). */
export type SkillsInput = { checked: 'instance'; instance: unknown } | { checked: Exclude<Checked, 'instance'>; items: unknown };

/** One configured instance checked on its own: everything but the uniqueness of its label in a list. */
export interface InstanceCheck {
  skill_id: string | null;
  instance_label: string | null;
  problems: string[];
}

/**
 * Checks one configured instance (docs/api.md#skill-library, #skill-catalogue): the skill and its version, the instance_label, the
 * authority_scale, and every value against the skill's fields (story paths against SOM 1.0
 * story.context, authorities against the instance's own scale). `consumer` is accepted unchecked.
 * The portal checks a registration with this same function.
 */
export function checkInstance(library: SkillLibrary, instance: unknown): InstanceCheck {
  if (!isPlainObject(instance)) {
    return { skill_id: null, instance_label: null, problems: [`the instance must be an object, got ${describeType(instance)}`] };
  }
  const problems: string[] = [];
  for (const key of Object.keys(instance)) {
    if (!INSTANCE_KEYS.includes(key)) problems.push(`${quote(key)} is not a field of a configured instance (fields: ${INSTANCE_KEYS.join(', ')})`);
  }

  const skillId = instance.skill_id;
  if (skillId === undefined) problems.push('skill_id is missing');
  else if (typeof skillId !== 'string') problems.push(`skill_id must be a string, got ${describeType(skillId)}`);

  let version = library.current;
  let versionKnown = true;
  const askedVersion = instance.skill_version;
  if (askedVersion !== undefined) {
    const carried = typeof askedVersion === 'string' ? library.version(askedVersion) : undefined;
    if (typeof askedVersion !== 'string') {
      problems.push(`skill_version must be a string, got ${describeType(askedVersion)}`);
      versionKnown = false;
    } else if (!carried) {
      problems.push(
        `skill_version ${quote(askedVersion)} is not a carried library version (carried: ${library.versions.map((v) => v.info.version).join(', ')})`,
      );
      versionKnown = false;
    } else if (carried.info.status === 'retired') {
      problems.push(`skill_version ${quote(askedVersion)} is retired; the current version is ${library.current.info.version}`);
      versionKnown = false;
    } else {
      version = carried;
    }
  }
  const skill = typeof skillId === 'string' && versionKnown ? version.skills.find((s) => s.skill_id === skillId) : undefined;
  if (typeof skillId === 'string' && versionKnown && !skill) {
    problems.push(`skill_id ${quote(skillId)} is not a skill of library ${version.info.version}`);
  }

  const label = instance.instance_label;
  if (label === undefined) problems.push('instance_label is missing');
  else if (typeof label !== 'string' || label.trim().length === 0 || label.length > LABEL_MAX || /[\r\n]/.test(label)) {
    problems.push(`instance_label must be one line of 1 to ${LABEL_MAX} characters`);
  }

  const scale = checkAuthorityScale(instance.authority_scale, problems);
  if (instance.authority_scale === undefined && skill?.authority_scale === 'required') {
    problems.push(`authority_scale is missing; ${skill.skill_id} compares authorities, so it needs the house's scale`);
  }

  if (skill) {
    const values = instance.values ?? {};
    if (!isPlainObject(values)) {
      problems.push(`values must be an object keyed by the skill's field names, got ${describeType(values)}`);
    } else {
      const fieldNames = skill.fields.map((f) => f.name);
      for (const key of Object.keys(values)) {
        if (!fieldNames.includes(key)) problems.push(`values: ${quote(key)} is not a field of ${skill.skill_id} (fields: ${fieldNames.join(', ')})`);
      }
      const ctx: FieldContext = { storyPaths: library.storyPaths, authorityScale: scale };
      for (const field of skill.fields) {
        const value = Object.hasOwn(values, field.name) ? values[field.name] : undefined;
        const at = `values.${field.name}`;
        // null is "left out", as YAML writes an empty value (`grace_period_ms:`).
        if (value === undefined || value === null) {
          if (field.required) problems.push(`${at} is missing (required)`);
          continue;
        }
        problems.push(...(FIELD_KINDS[field.kind] as (typeof FIELD_KINDS)[string]).check(value, field, at, ctx));
      }
    }
  }

  return { skill_id: typeof skillId === 'string' ? skillId : null, instance_label: typeof label === 'string' ? label : null, problems };
}

/** The instance's authority scale when readable (distinct snake_case names, highest first), else null. */
function checkAuthorityScale(raw: unknown, problems: string[]): string[] | null {
  if (raw === undefined) return null;
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push(
      `authority_scale must be a non-empty list of authority names, highest first, got ${Array.isArray(raw) ? 'an empty list' : describeType(raw)}`,
    );
    return null;
  }
  const before = problems.length;
  const seen = new Set<string>();
  raw.forEach((name, i) => {
    if (typeof name !== 'string' || !SNAKE_CASE_NAME.test(name) || name.length > 64) {
      problems.push(`authority_scale[${i}]: ${quote(name)} is not an authority name (snake_case, e.g. senior_editor)`);
    } else if (seen.has(name)) {
      problems.push(`authority_scale[${i}]: ${quote(name)} is listed twice`);
    } else {
      seen.add(name);
    }
  });
  return problems.length > before ? null : (raw as string[]);
}

/** The validation answer (docs/api.md#skill-library) for a read request: 200 whatever it says. */
export function checkSkillsInput(library: SkillLibrary, input: SkillsInput): ValidationAnswer {
  const answer = (instances: InstanceResult[], problems: string[]): ValidationAnswer => ({
    valid: problems.length === 0 && instances.every((i) => i.valid),
    library_version: library.current.info.version,
    checked: input.checked,
    instances,
    problems,
  });
  if (input.checked === 'instance') return answer([result(0, checkInstance(library, input.instance))], []);

  const what = input.checked === 'file' ? 'the skills: section' : 'skills';
  if (!Array.isArray(input.items)) return answer([], [`${what} must be a list of instances, got ${describeType(input.items)}`]);
  if (input.items.length > MAX_INSTANCES) {
    return answer([], [`the list has ${input.items.length} instances, more than the ${MAX_INSTANCES} allowed; none was checked`]);
  }
  const checks = input.items.map((item) => checkInstance(library, item));
  const byLabel = new Map<string, number[]>();
  checks.forEach((c, i) => {
    if (c.instance_label !== null) byLabel.set(c.instance_label, [...(byLabel.get(c.instance_label) ?? []), i]);
  });
  for (const [label, indexes] of byLabel) {
    if (indexes.length < 2) continue;
    const unnamed = indexes.length - SHARED_LABEL_INDEXES;
    const named = `${indexes.slice(0, SHARED_LABEL_INDEXES).join(', ')}${unnamed > 0 ? ` and ${unnamed} more` : ''}`;
    const problem = `instance_label ${quote(label)} is used by more than one instance (${named})`;
    for (const i of indexes) (checks[i] as InstanceCheck).problems.push(problem);
  }
  return answer(
    checks.map((c, i) => result(i, c)),
    [],
  );
}

function result(index: number, check: InstanceCheck): InstanceResult {
  return {
    index,
    // A valid label (at most LABEL_MAX UTF-16 units) is never cut.
    instance_label: check.instance_label === null ? null : cut(check.instance_label, LABEL_MAX),
    skill_id: check.skill_id === null ? null : cut(check.skill_id, SKILL_ID_ECHO_MAX),
    valid: check.problems.length === 0,
    problems: listed(check.problems),
  };
}

const utf8 = new TextEncoder();

/** The first problems, as many as the bounds above allow, and a last line counting the others. */
function listed(problems: string[]): string[] {
  const lines: string[] = [];
  let bytes = 0;
  for (const problem of problems) {
    if (lines.length === PROBLEMS_LISTED) break;
    const line = cut(problem, PROBLEM_MAX_CHARS);
    // As the answer writes it: JSON-escaped, UTF-8, with the comma before the next.
    const size = utf8.encode(JSON.stringify(line)).length + 1;
    if (bytes + size > PROBLEMS_BYTES) break;
    lines.push(line);
    bytes += size;
  }
  const rest = problems.length - lines.length;
  if (rest > 0) lines.push(`and ${rest} more problem${rest === 1 ? '' : 's'} not listed`);
  return lines;
}
