import { som } from '@bus/schemas';
import { FIELD_KINDS } from './kinds';
import { compareVersions, LibraryDataError, loadSkillLibrary } from './library';
import { libraryData, threeVersionLibrary, type Json } from './testing';

const library = loadSkillLibrary();
const answer = library.answer('0.2.2');
if (!answer) throw new Error('0.2.2 is not carried');

describe('the skill library 0.2.2', () => {
  it('is the one carried version, and current', () => {
    expect(library.versions.map((v) => v.info.version)).toEqual(['0.2.2']);
    expect(library.current.info.version).toBe('0.2.2');
    expect(answer.library).toEqual({
      version: '0.2.2',
      status: 'current',
      suite: 'som-1.0-skills-0.2.2',
      som_version: '1.0.0',
      source: expect.stringMatching(/^https:\/\//),
      source_commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(answer.versions).toEqual([{ version: '0.2.2', status: 'current', suite: 'som-1.0-skills-0.2.2' }]);
  });

  it('has at least 8 skills in at least 3 groups, each <group>/<name> of the library version', () => {
    expect(answer.skills.length).toBeGreaterThanOrEqual(8);
    expect(new Set(answer.skills.map((s) => s.skill_id.split('/')[0])).size).toBeGreaterThanOrEqual(3);
    for (const skill of answer.skills) {
      expect(skill.skill_id).toMatch(/^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/);
      expect(skill.skill_version).toBe('0.2.2');
      expect(Object.keys(skill)).toEqual(['skill_id', 'name', 'skill_version', 'category', 'severity_range', 'authority_scale', 'recall_on', 'fields']);
    }
  });

  it('has skills that require an authority scale and skills that do not', () => {
    expect(answer.skills.filter((s) => s.authority_scale === 'required').length).toBeGreaterThanOrEqual(1);
    expect(answer.skills.filter((s) => s.authority_scale === 'optional').length).toBeGreaterThanOrEqual(1);
  });

  it('names the SOM 1.0 schema of each recalled type with spec schema, and none for pending-spec', () => {
    const recalls = answer.skills.flatMap((s) => s.recall_on);
    for (const r of recalls) {
      if (r.spec === 'schema') expect(r.schema).toBe(som.payloads[r.message_type]?.$id);
      else expect(r).toEqual({ message_type: r.message_type, spec: 'pending-spec' });
    }
    const pending = recalls.filter((r) => r.spec === 'pending-spec');
    expect(pending.length).toBeGreaterThanOrEqual(1);
    for (const r of pending) expect(Object.hasOwn(som.payloads, r.message_type)).toBe(false);
  });

  it('derives topics: every recalled message type once, with its spec', () => {
    const recalled = new Map(answer.skills.flatMap((s) => s.recall_on.map((r) => [r.message_type, r.spec] as const)));
    expect(answer.topics).toEqual([...recalled].sort(([a], [b]) => (a < b ? -1 : 1)).map(([message_type, spec]) => ({ message_type, spec })));
  });

  it('derives field_kinds: the kinds its fields use, with how each is checked', () => {
    const used = [...new Set(answer.skills.flatMap((s) => s.fields.map((f) => f.kind)))].sort();
    expect(Object.keys(answer.field_kinds)).toEqual(used);
    for (const kind of used) expect(answer.field_kinds[kind]).toBe(FIELD_KINDS[kind]?.description);
    expect(used).toEqual(expect.arrayContaining(['path', 'enum', 'row']));
  });

  it('gives every field about text, and enum and row fields their options', () => {
    for (const field of answer.skills.flatMap((s) => s.fields)) {
      expect(field.about.length).toBeGreaterThan(10);
      if (['enum', 'enum_list', 'row'].includes(field.kind)) expect(field.options.length).toBeGreaterThan(0);
      else expect(field.options).toEqual([]);
    }
  });

  it('knows the story.context paths of SOM 1.0, through arrays by naming them', () => {
    expect(library.storyPaths.has('audience.age_band')).toBe(true);
    expect(library.storyPaths.has('characters.voice.voice_id')).toBe(true);
    expect(library.storyPaths.has('characters.relationships.kind')).toBe(true);
    expect(library.storyPaths.has('setting.places.kind')).toBe(true);
    expect(library.storyPaths.has('story.title.length')).toBe(false);
    expect(library.storyPaths.has('characters.0.name')).toBe(false);
  });

  it('answers undefined for a version it does not carry', () => {
    expect(library.answer('0.2.3')).toBeUndefined();
    expect(library.version('0.2.3')).toBeUndefined();
  });
});

describe('several carried versions', () => {
  it('lists them newest first, each answer with its own skills', () => {
    const three = threeVersionLibrary();
    expect(three.answer('0.2.1')?.versions).toEqual([
      { version: '0.2.2', status: 'current', suite: 'som-1.0-skills-0.2.2' },
      { version: '0.2.1', status: 'supported', suite: 'som-1.0-skills-0.2.1' },
      { version: '0.1.0', status: 'retired', suite: 'som-1.0-skills-0.1.0' },
    ]);
    expect(three.answer('0.2.1')?.skills.map((s) => s.skill_id)).not.toContain('telling/locale-match');
    expect(three.answer('0.2.1')?.skills.every((s) => s.skill_version === '0.2.1')).toBe(true);
    expect(three.current.info.version).toBe('0.2.2');
  });

  it('compares versions numerically', () => {
    expect(['0.10.0', '0.2.2', '0.9.1', '1.0.0'].sort(compareVersions)).toEqual(['0.2.2', '0.9.1', '0.10.0', '1.0.0']);
  });
});

describe('library data that does not hold together is refused at load', () => {
  const load = (edit: (data: Json, skills: Json[]) => void, extra: Json[] = []) => {
    const data = libraryData();
    edit(data, data.skills as Json[]);
    try {
      loadSkillLibrary({ versions: [data, ...extra] });
    } catch (err) {
      expect(err).toBeInstanceOf(LibraryDataError);
      return (err as LibraryDataError).problems;
    }
    throw new Error('loaded');
  };
  const field = (skills: Json[], i: number, j: number) => ((skills[i] as Json).fields as Json[])[j] as Json;

  it.each<[string, (data: Json, skills: Json[]) => void, string]>([
    ['an unknown field kind', (_d, s) => (field(s, 0, 0).kind = 'colour'), 'field voice_path: kind "colour" is not one of'],
    ['an enum without options', (_d, s) => (field(s, 0, 1).options = []), 'field narrator_overlap: a field of kind enum needs options'],
    ['options on a path field', (_d, s) => (field(s, 0, 0).options = ['a']), 'field voice_path: a field of kind path takes no options'],
    ['a field twice', (_d, s) => ((s[0] as Json).fields as Json[]).push(field(s, 0, 0)), 'field voice_path is defined twice'],
    [
      'spec schema for a type SOM 1.0 lacks',
      (_d, s) => ((s[1] as Json).recall_on = [{ message_type: 'canon.fact_revised', spec: 'schema' }]),
      'recall_on canon.fact_revised says spec schema, but SOM 1.0 has no schema for it',
    ],
    [
      'pending-spec for a type SOM 1.0 has',
      (_d, s) => ((s[1] as Json).recall_on = [{ message_type: 'story.context', spec: 'pending-spec' }]),
      'recall_on story.context says pending-spec, but SOM 1.0 has a schema for it',
    ],
    ['a bad skill_id', (_d, s) => ((s[0] as Json).skill_id = 'Voice'), 'skill_id must be <group>/<name>'],
    [
      "a severity outside SOM's",
      (_d, s) => ((s[0] as Json).severity_range = ['low', 'urgent']),
      'severity_range must be a non-empty list of info, low, medium, high, critical',
    ],
    ['severities out of order', (_d, s) => ((s[0] as Json).severity_range = ['high', 'low']), 'severity_range must go from lowest to highest, each once'],
    [
      'a required authority field with an optional scale',
      (_d, s) => ((s[0] as Json).authority_scale = 'optional'),
      'field defended_authority needs an authority, so authority_scale must be required',
    ],
    ['a skill twice', (_d, s) => s.push(structuredClone(s[0] as Json)), 'skill continuity/character-voice is defined twice'],
    ['a bad source_commit', (d) => (d.source_commit = 'main'), 'source_commit must be 40 hex digits'],
    ['an unknown key', (_d, s) => ((s[0] as Json).skill_versoin = '0.2.2'), 'unknown key "skill_versoin"'],
  ])('%s', (_what, edit, problem) => {
    expect(load(edit)).toEqual(expect.arrayContaining([expect.stringContaining(problem)]));
  });

  it('needs exactly one current version', () => {
    const other = { ...libraryData(), version: '0.3.0' };
    expect(load(() => undefined, [other])).toEqual(['exactly one version must be current, found 2']);
  });
});
