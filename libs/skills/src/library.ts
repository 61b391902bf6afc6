import { skills as skillsData, som as somSchemas } from '@bus/schemas';
import { FIELD_KINDS, SNAKE_CASE_NAME, isPlainObject, quote } from './kinds';
import type { LibraryAnswer, LibraryInfo, LibraryStatus, LibraryVersion, RecallOn, SkillField, SkillRecord, Topic } from './model';
import { storyContextPaths } from './story-paths';

type Schema = Readonly<Record<string, unknown>>;

/** The SOM 1.0 schemas the library is checked against: payload schemas by message type, and defs. */
export interface SomSchemas {
  readonly defs: Schema;
  readonly payloads: Readonly<Record<string, Schema>>;
}

/** The library data does not hold together; names every problem. Raised at start-up, never per request. */
export class LibraryDataError extends Error {
  override readonly name = 'LibraryDataError';
  constructor(readonly problems: readonly string[]) {
    super(`The skill library data is invalid:\n- ${problems.join('\n- ')}`);
  }
}

/** The carried library versions, checked and with everything derivable derived. */
export interface SkillLibrary {
  /** The version new configured instances use (status current). */
  readonly current: LibraryVersion;
  /** Newest first. */
  readonly versions: readonly LibraryVersion[];
  version(version: string): LibraryVersion | undefined;
  /** The library answer (docs/api.md#skill-library) for a carried version; undefined for any other. */
  answer(version: string): LibraryAnswer | undefined;
  /** The dot paths of SOM 1.0 story.context. */
  readonly storyPaths: ReadonlySet<string>;
}

const STATUSES: readonly LibraryStatus[] = ['current', 'supported', 'retired'];
const SEMVER = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
/** Lowest first: a skill's severity_range is written in this order. */
export const SEVERITY_LADDER = ['info', 'low', 'medium', 'high', 'critical'] as const;
const MESSAGE_TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const SKILL_KEYS = ['skill_id', 'name', 'category', 'severity_range', 'authority_scale', 'about', 'recall_on', 'fields'];
const FIELD_KEYS = ['name', 'kind', 'required', 'options', 'about'];
const LIBRARY_KEYS = ['version', 'status', 'som_version', 'source', 'source_commit', 'skills'];

/** Compares two x.y.z versions numerically. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

/**
 * Checks the authored library data (see @bus/schemas `skills`) against itself and SOM 1.0 and derives
 * what the answer shows but the data does not repeat: each skill's skill_version (its library
 * version), the suite id, the schema of each recall_on entry, topics and field_kinds.
 */
export function loadSkillLibrary(
  data: { readonly versions: readonly unknown[] } = skillsData,
  som: SomSchemas = somSchemas as unknown as SomSchemas,
): SkillLibrary {
  const problems: string[] = [];
  const skillIdPattern = skillIdRegex(som);
  const somSeverities = severityEnum(som);
  if (somSeverities.length !== SEVERITY_LADDER.length || !SEVERITY_LADDER.every((s) => somSeverities.includes(s))) {
    problems.push(`the severity ladder ${SEVERITY_LADDER.join(', ')} is not SOM 1.0's severities ${somSeverities.join(', ')}`);
  }
  const storyContext = som.payloads['story.context'];
  if (!storyContext) throw new LibraryDataError(['SOM has no story.context payload schema']);
  const storyPaths = storyContextPaths(storyContext, som.defs);

  const versions: LibraryVersion[] = [];
  data.versions.forEach((raw, i) => {
    const version = loadVersion(raw, `versions[${i}]`, { som, skillIdPattern, problems });
    if (version) versions.push(version);
  });
  versions.sort((a, b) => compareVersions(b.info.version, a.info.version));
  const seen = new Set<string>();
  for (const v of versions) {
    if (seen.has(v.info.version)) problems.push(`version ${v.info.version} is carried twice`);
    seen.add(v.info.version);
  }
  const current = versions.filter((v) => v.info.status === 'current');
  if (current.length !== 1) problems.push(`exactly one version must be current, found ${current.length}`);
  if (problems.length > 0) throw new LibraryDataError(problems);

  const byVersion = new Map(versions.map((v) => [v.info.version, v]));
  const summaries = versions.map((v) => ({ version: v.info.version, status: v.info.status, suite: v.info.suite }));
  const answers = new Map<string, LibraryAnswer>(
    versions.map((v) => [
      v.info.version,
      { library: v.info, versions: summaries, skills: [...v.skills], topics: topicsOf(v.skills), field_kinds: fieldKindsOf(v.skills) },
    ]),
  );
  return {
    current: current[0] as LibraryVersion,
    versions,
    version: (version) => byVersion.get(version),
    answer: (version) => answers.get(version),
    storyPaths,
  };
}

interface LoadContext {
  som: SomSchemas;
  skillIdPattern: RegExp;
  problems: string[];
}

function loadVersion(raw: unknown, at: string, ctx: LoadContext): LibraryVersion | undefined {
  const { problems } = ctx;
  if (!isPlainObject(raw)) {
    problems.push(`${at} is not an object`);
    return undefined;
  }
  for (const key of Object.keys(raw)) if (!LIBRARY_KEYS.includes(key)) problems.push(`${at}: unknown key ${quote(key)}`);
  const { version, status, som_version: somVersion, source, source_commit: sourceCommit } = raw;
  const before = problems.length;
  if (typeof version !== 'string' || !SEMVER.test(version)) problems.push(`${at}.version must be x.y.z`);
  if (typeof status !== 'string' || !STATUSES.includes(status as LibraryStatus)) problems.push(`${at}.status must be one of ${STATUSES.join(', ')}`);
  if (typeof somVersion !== 'string' || !SEMVER.test(somVersion)) problems.push(`${at}.som_version must be x.y.z`);
  if (typeof source !== 'string' || !/^https:\/\/\S+$/.test(source)) problems.push(`${at}.source must be an https link`);
  if (typeof sourceCommit !== 'string' || !/^[0-9a-f]{40}$/.test(sourceCommit)) problems.push(`${at}.source_commit must be 40 hex digits`);
  if (!Array.isArray(raw.skills) || raw.skills.length === 0) problems.push(`${at}.skills must be a non-empty list`);
  if (problems.length > before) return undefined;

  const libVersion = version as string;
  const skills: SkillRecord[] = [];
  const about = new Map<string, string>();
  (raw.skills as unknown[]).forEach((s, i) => {
    const skill = loadSkill(s, `${at}.skills[${i}]`, libVersion, ctx);
    if (!skill) return;
    if (about.has(skill.record.skill_id)) problems.push(`${at}: skill ${skill.record.skill_id} is defined twice`);
    about.set(skill.record.skill_id, skill.about);
    skills.push(skill.record);
  });
  const [major, minor] = (somVersion as string).split('.');
  const info: LibraryInfo = {
    version: libVersion,
    status: status as LibraryStatus,
    suite: `som-${major}.${minor}-skills-${libVersion}`,
    som_version: somVersion as string,
    source: source as string,
    source_commit: sourceCommit as string,
  };
  return { info, skills, about };
}

function loadSkill(raw: unknown, at: string, libVersion: string, ctx: LoadContext): { record: SkillRecord; about: string } | undefined {
  const { problems, som } = ctx;
  if (!isPlainObject(raw)) {
    problems.push(`${at} is not an object`);
    return undefined;
  }
  const id = typeof raw.skill_id === 'string' ? raw.skill_id : '';
  const where = id ? `skill ${id}` : at;
  for (const key of Object.keys(raw)) if (!SKILL_KEYS.includes(key)) problems.push(`${where}: unknown key ${quote(key)}`);
  const before = problems.length;
  if (!ctx.skillIdPattern.test(id)) problems.push(`${where}: skill_id must be <group>/<name> as SOM 1.0 skill references write it`);
  if (!isNonEmptyString(raw.name)) problems.push(`${where}: name is missing`);
  if (!isNonEmptyString(raw.category)) problems.push(`${where}: category is missing`);
  if (!isNonEmptyString(raw.about)) problems.push(`${where}: about is missing`);
  if (raw.authority_scale !== 'required' && raw.authority_scale !== 'optional') problems.push(`${where}: authority_scale must be required or optional`);
  const range = raw.severity_range;
  if (!Array.isArray(range) || range.length === 0 || !range.every((s) => (SEVERITY_LADDER as readonly unknown[]).includes(s))) {
    problems.push(`${where}: severity_range must be a non-empty list of ${SEVERITY_LADDER.join(', ')}`);
  } else {
    const ranks = range.map((s) => SEVERITY_LADDER.indexOf(s as (typeof SEVERITY_LADDER)[number]));
    if (ranks.some((r, i) => i > 0 && r <= (ranks[i - 1] as number))) problems.push(`${where}: severity_range must go from lowest to highest, each once`);
  }

  const recallOn: RecallOn[] = [];
  if (!Array.isArray(raw.recall_on) || raw.recall_on.length === 0) {
    problems.push(`${where}: recall_on must be a non-empty list`);
  } else {
    const seen = new Set<string>();
    for (const entry of raw.recall_on as unknown[]) {
      const recall = loadRecall(entry, where, som, problems);
      if (!recall) continue;
      if (seen.has(recall.message_type)) problems.push(`${where}: recall_on lists ${recall.message_type} twice`);
      seen.add(recall.message_type);
      recallOn.push(recall);
    }
  }

  const fields: SkillField[] = [];
  if (!Array.isArray(raw.fields)) {
    problems.push(`${where}: fields must be a list`);
  } else {
    const names = new Set<string>();
    for (const entry of raw.fields as unknown[]) {
      const field = loadField(entry, where, problems);
      if (!field) continue;
      if (names.has(field.name)) problems.push(`${where}: field ${field.name} is defined twice`);
      names.add(field.name);
      if (field.kind === 'authority' && field.required && raw.authority_scale !== 'required') {
        problems.push(`${where}: field ${field.name} needs an authority, so authority_scale must be required`);
      }
      fields.push(field);
    }
  }
  if (problems.length > before) return undefined;
  return {
    record: {
      skill_id: id,
      name: raw.name as string,
      skill_version: libVersion,
      category: raw.category as string,
      severity_range: [...(range as string[])],
      authority_scale: raw.authority_scale as 'required' | 'optional',
      recall_on: recallOn,
      fields,
    },
    about: raw.about as string,
  };
}

function loadRecall(entry: unknown, where: string, som: SomSchemas, problems: string[]): RecallOn | undefined {
  if (!isPlainObject(entry) || typeof entry.message_type !== 'string' || !MESSAGE_TYPE.test(entry.message_type)) {
    problems.push(`${where}: every recall_on entry needs a dotted message_type`);
    return undefined;
  }
  const type = entry.message_type;
  for (const key of Object.keys(entry)) if (key !== 'message_type' && key !== 'spec') problems.push(`${where}: recall_on ${type}: unknown key ${quote(key)}`);
  const schema = Object.hasOwn(som.payloads, type) ? som.payloads[type] : undefined;
  if (entry.spec === 'schema') {
    if (!schema || typeof schema.$id !== 'string') {
      problems.push(`${where}: recall_on ${type} says spec schema, but SOM 1.0 has no schema for it`);
      return undefined;
    }
    return { message_type: type, spec: 'schema', schema: schema.$id };
  }
  if (entry.spec === 'pending-spec') {
    if (schema) problems.push(`${where}: recall_on ${type} says pending-spec, but SOM 1.0 has a schema for it`);
    return { message_type: type, spec: 'pending-spec' };
  }
  problems.push(`${where}: recall_on ${type}: spec must be schema or pending-spec`);
  return undefined;
}

function loadField(entry: unknown, where: string, problems: string[]): SkillField | undefined {
  if (!isPlainObject(entry) || typeof entry.name !== 'string' || !SNAKE_CASE_NAME.test(entry.name)) {
    problems.push(`${where}: every field needs a snake_case name`);
    return undefined;
  }
  const at = `${where}: field ${entry.name}`;
  const before = problems.length;
  for (const key of Object.keys(entry)) if (!FIELD_KEYS.includes(key)) problems.push(`${at}: unknown key ${quote(key)}`);
  const kind = entry.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(FIELD_KINDS, kind))
    problems.push(`${at}: kind ${quote(kind)} is not one of ${Object.keys(FIELD_KINDS).join(', ')}`);
  if (typeof entry.required !== 'boolean') problems.push(`${at}: required must be true or false`);
  if (!isNonEmptyString(entry.about)) problems.push(`${at}: about is missing`);
  const options = entry.options;
  if (!Array.isArray(options) || !options.every(isNonEmptyString) || new Set(options).size !== options.length) {
    problems.push(`${at}: options must be a list of distinct strings`);
  } else {
    const needsOptions = kind === 'enum' || kind === 'enum_list' || kind === 'row';
    if (needsOptions && options.length === 0) problems.push(`${at}: a field of kind ${String(kind)} needs options`);
    if (!needsOptions && options.length > 0) problems.push(`${at}: a field of kind ${String(kind)} takes no options`);
  }
  if (problems.length > before) return undefined;
  return { name: entry.name, kind: kind as string, required: entry.required as boolean, options: [...(options as string[])], about: entry.about as string };
}

/** Each message type any skill recalls on, once, sorted. */
function topicsOf(skills: readonly SkillRecord[]): Topic[] {
  const topics = new Map<string, Topic>();
  for (const skill of skills) for (const r of skill.recall_on) topics.set(r.message_type, { message_type: r.message_type, spec: r.spec });
  return [...topics.values()].sort((a, b) => (a.message_type < b.message_type ? -1 : 1));
}

/** The kinds the skills' fields use, sorted, with how each is checked. */
function fieldKindsOf(skills: readonly SkillRecord[]): Record<string, string> {
  const kinds = [...new Set(skills.flatMap((s) => s.fields.map((f) => f.kind)))].sort();
  return Object.fromEntries(kinds.map((k) => [k, (FIELD_KINDS[k] as { description: string }).description]));
}

function skillIdRegex(som: SomSchemas): RegExp {
  const skillRef = (som.defs.$defs as Record<string, Schema> | undefined)?.skill_ref;
  const pattern = ((skillRef?.properties as Record<string, Schema> | undefined)?.skill_id?.pattern ?? '') as string;
  if (!pattern) throw new LibraryDataError(['SOM defs have no skill_ref.skill_id pattern']);
  return new RegExp(pattern);
}

function severityEnum(som: SomSchemas): string[] {
  const warning = som.payloads['skill.warning.raised'];
  const severity = (warning?.properties as Record<string, Schema> | undefined)?.severity;
  return Array.isArray(severity?.enum) ? (severity.enum as string[]) : [];
}
