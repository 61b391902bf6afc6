import { checkInstance, checkSkillsInput, MAX_INSTANCES } from './check';
import { loadSkillLibrary } from './library';
import { instance, threeVersionLibrary, VALID, withValues, type Json } from './testing';

const library = loadSkillLibrary();
const problemsOf = (i: unknown) => checkInstance(library, i).problems;

describe('a valid configured instance', () => {
  it.each(Object.keys(VALID))('of %s has no problems', (skillId) => {
    expect(checkInstance(library, instance(skillId))).toEqual({ skill_id: skillId, instance_label: expect.any(String), problems: [] });
  });

  it('covers every skill of the library', () => {
    expect(Object.keys(VALID).sort()).toEqual(library.current.skills.map((s) => s.skill_id).sort());
  });

  it("may leave out optional fields, values null (YAML's empty value) counting as left out", () => {
    expect(problemsOf(withValues('links/dead-end', { exempt_segment_kinds: null }))).toEqual([]);
    const { values: _values, ...noValues } = instance('continuity/place-consistency');
    expect(problemsOf({ ...noValues, values: { places_path: 'setting.places', tolerance: 'strict' } })).toEqual([]);
  });

  it('accepts consumer unchecked, whatever it holds', () => {
    expect(problemsOf(instance('telling/pacing', { consumer: { any: ['thing', 1] } }))).toEqual([]);
  });
});

describe('the instance itself', () => {
  it.each([
    [null, 'null'],
    [[], 'a list'],
    ['continuity/canon-guard', 'a string'],
    [7, 'a number'],
  ])('refuses %j: not an object', (value, what) => {
    expect(checkInstance(library, value)).toEqual({ skill_id: null, instance_label: null, problems: [`the instance must be an object, got ${what}`] });
  });

  it('names an unknown member', () => {
    expect(problemsOf(instance('telling/pacing', { valuez: {} }))).toEqual([
      '"valuez" is not a field of a configured instance (fields: skill_id, skill_version, instance_label, values, authority_scale, consumer)',
    ]);
  });
});

describe('the skill and its version', () => {
  it('needs a skill_id', () => {
    const { skill_id: _id, ...rest } = instance('telling/pacing');
    expect(checkInstance(library, rest)).toMatchObject({ skill_id: null, problems: ['skill_id is missing'] });
    expect(problemsOf({ ...rest, skill_id: 42 })).toEqual(['skill_id must be a string, got a number']);
  });

  it('names a skill the library does not have', () => {
    expect(problemsOf(instance('telling/pacing', { skill_id: 'telling/pace' }))).toEqual(['skill_id "telling/pace" is not a skill of library 0.2.2']);
  });

  it('checks against the current version when skill_version is left out, and against 0.2.2 when named', () => {
    expect(problemsOf(instance('links/dead-end', { skill_version: '0.2.2' }))).toEqual([]);
  });

  it('checks an instance of another carried version against that version', () => {
    const three = threeVersionLibrary();
    // 0.2.1's dead-end has no exempt_segment_kinds; 0.2.2's has.
    expect(checkInstance(three, instance('links/dead-end', { skill_version: '0.2.1' })).problems).toEqual([
      'values: "exempt_segment_kinds" is not a field of links/dead-end (fields: min_open_links)',
    ]);
    expect(checkInstance(three, instance('links/dead-end')).problems).toEqual([]);
    expect(checkInstance(three, instance('telling/locale-match', { skill_version: '0.2.1' })).problems).toEqual([
      'skill_id "telling/locale-match" is not a skill of library 0.2.1',
    ]);
  });

  it('refuses a retired version and an unknown one', () => {
    const three = threeVersionLibrary();
    expect(checkInstance(three, instance('links/dead-end', { skill_version: '0.1.0' })).problems).toEqual([
      'skill_version "0.1.0" is retired; the current version is 0.2.2',
    ]);
    expect(checkInstance(three, instance('links/dead-end', { skill_version: '9.9.9' })).problems).toEqual([
      'skill_version "9.9.9" is not a carried library version (carried: 0.2.2, 0.2.1, 0.1.0)',
    ]);
    expect(problemsOf(instance('links/dead-end', { skill_version: 2 }))).toEqual(['skill_version must be a string, got a number']);
  });
});

describe('instance_label', () => {
  it('must be present', () => {
    const { instance_label: _l, ...rest } = instance('telling/pacing');
    expect(checkInstance(library, rest)).toMatchObject({ instance_label: null, problems: ['instance_label is missing'] });
  });

  it.each([[''], ['   '], ['two\nlines'], ['x'.repeat(201)], [5]])('must be one line of 1 to 200 characters: %j', (label) => {
    expect(problemsOf(instance('telling/pacing', { instance_label: label }))).toEqual(['instance_label must be one line of 1 to 200 characters']);
  });

  it('must be unique within a list; each instance sharing it says so', () => {
    const answer = checkSkillsInput(library, {
      checked: 'list',
      items: [instance('telling/pacing'), instance('links/dead-end', { instance_label: 'speaker pacing' }), instance('telling/locale-match')],
    });
    expect(answer.valid).toBe(false);
    expect(answer.instances.map((i) => i.problems)).toEqual([
      ['instance_label "speaker pacing" is used by more than one instance (0, 1)'],
      ['instance_label "speaker pacing" is used by more than one instance (0, 1)'],
      [],
    ]);
  });
});

describe('authority_scale', () => {
  it('is required where the skill compares authorities', () => {
    const { authority_scale: _s, ...rest } = instance('continuity/canon-guard');
    expect(problemsOf(rest)).toEqual([
      "authority_scale is missing; continuity/canon-guard compares authorities, so it needs the house's scale",
      'values.min_authority: "author" cannot be checked: the instance has no valid authority_scale',
    ]);
  });

  it("is not required where the skill's scale is optional", () => {
    expect(problemsOf(instance('telling/pacing'))).toEqual([]);
  });

  it.each([
    ['editor', ['authority_scale must be a non-empty list of authority names, highest first, got a string']],
    [[], ['authority_scale must be a non-empty list of authority names, highest first, got an empty list']],
    [['author', 'Senior Editor'], ['authority_scale[1]: "Senior Editor" is not an authority name (snake_case, e.g. senior_editor)']],
    [['author', 'author'], ['authority_scale[1]: "author" is listed twice']],
  ])('must be distinct snake_case names: %j', (scale, expected) => {
    const problems = problemsOf(instance('links/gate-authority', { authority_scale: scale }));
    expect(problems.slice(0, expected.length)).toEqual(expected);
    // The authority value cannot be checked against an unreadable scale, and says so.
    expect(problems.slice(expected.length)).toEqual(['values.override_authority: "editor" cannot be checked: the instance has no valid authority_scale']);
  });

  it('is checked when given to a skill whose scale is optional', () => {
    expect(problemsOf(instance('continuity/place-consistency', { authority_scale: ['Author'] }))).toEqual([
      'authority_scale[0]: "Author" is not an authority name (snake_case, e.g. senior_editor)',
    ]);
  });
});

describe("values against the skill's fields", () => {
  it('must be an object', () => {
    expect(problemsOf(instance('telling/pacing', { values: ['a'] }))).toEqual(["values must be an object keyed by the skill's field names, got a list"]);
  });

  it('names a required field left out', () => {
    const base = instance('audience/content-warnings');
    const values = { ...(base.values as Json) };
    delete values.must_announce;
    expect(problemsOf({ ...base, values })).toEqual(['values.must_announce is missing (required)']);
    expect(problemsOf({ ...base, values: undefined })).toEqual([
      'values.warnings_path is missing (required)',
      'values.must_announce is missing (required)',
      'values.announce_at is missing (required)',
    ]);
  });

  it('names a value that is not a field of the skill', () => {
    expect(problemsOf(withValues('links/dead-end', { max_dead_ends: 2 }))).toEqual([
      'values: "max_dead_ends" is not a field of links/dead-end (fields: min_open_links, exempt_segment_kinds)',
    ]);
  });

  describe('kind path: a dot path of SOM 1.0 story.context', () => {
    it.each(['audience.age_band', 'characters.voice.voice_id', 'canon.subject', 'audience.accessibility', 'story'])('accepts %s', (path) => {
      expect(problemsOf(withValues('telling/locale-match', { locale_path: path }))).toEqual([]);
    });

    it.each([
      ['audience.agebnad', '"audience.agebnad" is not a path of SOM 1.0 story.context'],
      ['characters.0.name', '"characters.0.name" is not a path of SOM 1.0 story.context'],
      ['payload.story.language', '"payload.story.language" is not a path of SOM 1.0 story.context'],
      ['', '"" is not a path of SOM 1.0 story.context'],
    ])('refuses %j', (path, problem) => {
      expect(problemsOf(withValues('telling/locale-match', { locale_path: path }))).toEqual([`values.locale_path: ${problem}`]);
    });

    it('refuses a value that is not a string', () => {
      expect(problemsOf(withValues('telling/locale-match', { locale_path: ['story.language'] }))).toEqual([
        'values.locale_path must be a dot path on story.context, got a list',
      ]);
    });
  });

  describe('kind path_list', () => {
    it('checks every path, and that none is listed twice', () => {
      expect(problemsOf(withValues('continuity/canon-guard', { watch_paths: ['characters.name', 'characters.nmae', 'characters.name'] }))).toEqual([
        'values.watch_paths[1]: "characters.nmae" is not a path of SOM 1.0 story.context',
        'values.watch_paths[2]: "characters.name" is listed twice',
      ]);
    });

    it('needs at least one path, in a list', () => {
      expect(problemsOf(withValues('continuity/canon-guard', { watch_paths: [] }))).toEqual(['values.watch_paths must list at least one path']);
      expect(problemsOf(withValues('continuity/canon-guard', { watch_paths: 'characters.name' }))).toEqual([
        'values.watch_paths must be a list of dot paths on story.context, got a string',
      ]);
    });
  });

  describe('kind enum: one of the options', () => {
    it.each([
      ['sometimes', 'values.narrator_overlap: "sometimes" is not one of allow, warn, forbid'],
      ['Forbid', 'values.narrator_overlap: "Forbid" is not one of allow, warn, forbid'],
      [true, 'values.narrator_overlap: true/false is not one of allow, warn, forbid'],
    ])('refuses %j', (value, problem) => {
      expect(problemsOf(withValues('continuity/character-voice', { narrator_overlap: value }))).toEqual([problem]);
    });
  });

  describe('kind enum_list', () => {
    it('checks every value and refuses repeats', () => {
      expect(problemsOf(withValues('audience/content-warnings', { must_announce: ['peril', 'gore', 'peril'] }))).toEqual([
        'values.must_announce[1]: "gore" is not one of discrimination, frightening_scenes, language, peril, self_harm, sexual_content, substance_use, violence',
        'values.must_announce[2]: "peril" is listed twice',
      ]);
    });

    it('accepts an empty list and refuses a non-list', () => {
      expect(problemsOf(withValues('audience/content-warnings', { must_announce: [] }))).toEqual([]);
      expect(problemsOf(withValues('audience/accessibility-coverage', { required_media: 'subtitles' }))).toEqual([
        'values.required_media must be a list of subtitles, transcript, got a string',
      ]);
    });
  });

  describe('kind row: keys among the options', () => {
    it('refuses an unknown key and a value that is not a scalar', () => {
      expect(problemsOf(withValues('telling/pacing', { max_segment_ms: { smart_speaker: [1], radio: 5 } }))).toEqual([
        'values.max_segment_ms.smart_speaker must be a string, number or true/false, got a list',
        'values.max_segment_ms: "radio" is not a key of this row (keys: broadcast, live, mobile_app, smart_speaker, voice_assistant, web)',
      ]);
    });

    it('needs an object with at least one key', () => {
      expect(problemsOf(withValues('links/gate-authority', { allowed_changers: {} }))).toEqual([
        'values.allowed_changers must have at least one of the keys audience, author, narrator, system',
      ]);
      expect(problemsOf(withValues('links/gate-authority', { allowed_changers: ['author'] }))).toEqual([
        'values.allowed_changers must be an object with keys among audience, author, narrator, system, got a list',
      ]);
    });
  });

  describe("kind authority: on the instance's own scale", () => {
    it('refuses an authority the scale does not list', () => {
      expect(problemsOf(withValues('links/gate-authority', { override_authority: 'producer' }))).toEqual([
        'values.override_authority: "producer" is not on the instance\'s authority_scale (author, editor)',
      ]);
    });

    it("uses the instance's scale, not a global one", () => {
      const custom = instance('links/gate-authority', {
        authority_scale: ['showrunner', 'producer'],
        values: { allowed_changers: { author: true }, override_authority: 'producer' },
      });
      expect(problemsOf(custom)).toEqual([]);
    });

    it('refuses a non-string, and an optional authority without a scale', () => {
      expect(problemsOf(withValues('links/gate-authority', { override_authority: 3 }))).toEqual([
        'values.override_authority must be an authority name, got a number',
      ]);
      expect(problemsOf(withValues('continuity/place-consistency', { min_authority: 'editor' }))).toEqual([
        'values.min_authority: "editor" cannot be checked: the instance has no valid authority_scale',
      ]);
    });
  });

  describe('kind integer and text', () => {
    it.each([[-1], [1.5], ['5'], [Number.MAX_SAFE_INTEGER + 2]])('integer refuses %j', (value) => {
      expect(problemsOf(withValues('links/dead-end', { min_open_links: value }))).toEqual([
        expect.stringMatching(/^values\.min_open_links must be a whole number, 0 or more, got /),
      ]);
    });

    it('text must be one line of 1 to 200 characters', () => {
      expect(problemsOf(withValues('telling/pacing', { label: 'a\nb' }))).toEqual(['values.label must be one line of 1 to 200 characters']);
      expect(problemsOf(withValues('telling/pacing', { label: 12 }))).toEqual(['values.label must be text, got a number']);
    });
  });

  it('keeps every problem on one line, even for values with line breaks', () => {
    const problems = problemsOf(withValues('telling/locale-match', { locale_path: 'story.\nlanguage', match: 'x\r\n'.repeat(40) }));
    expect(problems).toHaveLength(2);
    for (const p of problems) expect(p).not.toMatch(/[\r\n]/);
    expect(problems[0]).toBe('values.locale_path: "story.\\nlanguage" is not a path of SOM 1.0 story.context');
    // Long values are cut to 60 characters of their JSON form.
    expect(problems[1]).toBe(`values.match: "${'x\\r\\n'.repeat(11)}x... is not one of language, language_and_region`);
  });
});

describe('the validation answer', () => {
  it('answers one instance', () => {
    expect(checkSkillsInput(library, { checked: 'instance', instance: instance('telling/pacing') })).toEqual({
      valid: true,
      library_version: '0.2.2',
      checked: 'instance',
      instances: [{ index: 0, instance_label: 'speaker pacing', skill_id: 'telling/pacing', valid: true, problems: [] }],
      problems: [],
    });
  });

  it('is valid only when every instance is', () => {
    const answer = checkSkillsInput(library, { checked: 'list', items: [instance('telling/pacing'), instance('links/dead-end', { skill_id: 'links/none' })] });
    expect(answer).toEqual({
      valid: false,
      library_version: '0.2.2',
      checked: 'list',
      instances: [
        { index: 0, instance_label: 'speaker pacing', skill_id: 'telling/pacing', valid: true, problems: [] },
        { index: 1, instance_label: 'no dead ends', skill_id: 'links/none', valid: false, problems: ['skill_id "links/none" is not a skill of library 0.2.2'] },
      ],
      problems: [],
    });
  });

  it(`checks ${MAX_INSTANCES} instances, and answers a top-level problem for ${MAX_INSTANCES + 1}`, () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => instance('telling/pacing', { instance_label: `pacing ${i}` }));
    const atLimit = checkSkillsInput(library, { checked: 'file', items: items(MAX_INSTANCES) });
    expect(atLimit.valid).toBe(true);
    expect(atLimit.instances).toHaveLength(MAX_INSTANCES);
    expect(checkSkillsInput(library, { checked: 'file', items: items(MAX_INSTANCES + 1) })).toEqual({
      valid: false,
      library_version: '0.2.2',
      checked: 'file',
      instances: [],
      problems: ['the list has 201 instances, more than the 200 allowed; none was checked'],
    });
  });

  it('answers a top-level problem when the list is not a list', () => {
    expect(checkSkillsInput(library, { checked: 'list', items: { a: 1 } }).problems).toEqual(['skills must be a list of instances, got an object']);
    expect(checkSkillsInput(library, { checked: 'file', items: 'x' }).problems).toEqual(['the skills: section must be a list of instances, got a string']);
  });

  it('answers an empty list as valid: there is nothing wrong with it', () => {
    expect(checkSkillsInput(library, { checked: 'list', items: [] })).toMatchObject({ valid: true, instances: [], problems: [] });
  });

  it('names the current version as library_version whatever the instances select', () => {
    expect(
      checkSkillsInput(threeVersionLibrary(), { checked: 'instance', instance: instance('links/dead-end', { skill_version: '0.2.1' }) }).library_version,
    ).toBe('0.2.2');
  });

  it('gives the same problems for the same input (stable strings)', () => {
    const input = { checked: 'list' as const, items: [withValues('audience/age-fit', { age_band_path: 'audience.age', severity: 'low' }), 5] };
    expect(checkSkillsInput(library, input)).toEqual(checkSkillsInput(loadSkillLibrary(), structuredClone(input)));
  });
});

describe('the size of the answer (docs/skills.md#the-answers-size)', () => {
  /** The bound docs/skills.md states, in bytes of the answer's JSON as UTF-8. */
  const ANSWER_BOUND = 691_000;
  const bytesOf = (answer: unknown) => new TextEncoder().encode(JSON.stringify(answer)).length;
  const unknownKeys = (n: number, key: (k: number) => string) => Object.fromEntries(Array.from({ length: n }, (_, k) => [key(k), 1]));

  it('lists at most 10 problems of an instance, then one line counting the rest', () => {
    // 200 instances of 180 unknown short keys: 252 KB of JSON, a body the catalogue reads.
    const twoLetters = (k: number) => String.fromCharCode(97 + Math.floor(k / 26), 97 + (k % 26));
    const items = Array.from({ length: MAX_INSTANCES }, () => unknownKeys(180, twoLetters));
    expect(new TextEncoder().encode(JSON.stringify({ skills: items })).length).toBeLessThanOrEqual(256 * 1024);
    const answer = checkSkillsInput(library, { checked: 'list', items });
    expect(answer.instances).toHaveLength(MAX_INSTANCES);
    for (const i of answer.instances) {
      expect(i.valid).toBe(false);
      expect(i.problems).toHaveLength(11);
      expect(i.problems[0]).toBe(
        '"aa" is not a field of a configured instance (fields: skill_id, skill_version, instance_label, values, authority_scale, consumer)',
      );
      // 180 unknown keys, skill_id and instance_label missing: 182 problems, 10 listed.
      expect(i.problems[10]).toBe('and 172 more problems not listed');
    }
    expect(bytesOf(answer)).toBeLessThan(300_000);
  });

  it('lists every problem of an instance that has 10 or fewer, and counts a single one left out in the singular', () => {
    const ten = checkSkillsInput(library, { checked: 'instance', instance: { ...instance('telling/pacing'), ...unknownKeys(10, (k) => `k${k}`) } });
    expect(ten.instances[0]!.problems).toHaveLength(10);
    expect(
      ten.instances[0]!.problems.every((p) =>
        p.endsWith('is not a field of a configured instance (fields: skill_id, skill_version, instance_label, values, authority_scale, consumer)'),
      ),
    ).toBe(true);
    const eleven = checkSkillsInput(library, { checked: 'instance', instance: { ...instance('telling/pacing'), ...unknownKeys(11, (k) => `k${k}`) } });
    expect(eleven.instances[0]!.problems.at(-1)).toBe('and 1 more problem not listed');
  });

  it('cuts long keys, values, labels and skill ids it quotes or echoes, and still says what is wrong', () => {
    const long = 'x'.repeat(100_000);
    const answer = checkSkillsInput(library, {
      checked: 'list',
      items: [
        { skill_id: long, instance_label: long, values: { [long]: long }, [long]: long, authority_scale: [long] },
        { ...instance('telling/locale-match'), instance_label: `${'y'.repeat(199)}😀😀`, values: { locale_path: long, match: long } },
        {
          ...instance('continuity/canon-guard'),
          authority_scale: Array.from({ length: 3000 }, (_, i) => `authority_${i}`),
          values: { watch_paths: ['characters.name'], min_authority: long },
        },
      ],
    });
    const [first, second, third] = answer.instances;
    expect(first!.skill_id).toBe(`${'x'.repeat(97)}...`);
    expect(first!.instance_label).toBe(`${'x'.repeat(197)}...`);
    expect(first!.problems).toEqual([
      `"${'x'.repeat(56)}... is not a field of a configured instance (fields: skill_id, skill_version, instance_label, values, authority_scale, consumer)`,
      `skill_id "${'x'.repeat(56)}... is not a skill of library 0.2.2`,
      'instance_label must be one line of 1 to 200 characters',
      `authority_scale[0]: "${'x'.repeat(56)}... is not an authority name (snake_case, e.g. senior_editor)`,
    ]);
    // A label of 201 code points is cut by code points, never leaving half a surrogate pair.
    expect(second!.instance_label).toBe(`${'y'.repeat(197)}...`);
    expect(second!.problems).toEqual([
      'instance_label must be one line of 1 to 200 characters',
      `values.locale_path: "${'x'.repeat(56)}... is not a path of SOM 1.0 story.context`,
      `values.match: "${'x'.repeat(56)}... is not one of language, language_and_region`,
    ]);
    // A problem naming a scale of 3,000 authorities is cut at 250 characters.
    expect(third!.problems).toEqual([
      expect.stringMatching(/^values\.min_authority: "x{56}\.\.\. is not on the instance's authority_scale \(authority_0, authority_1, .*\.\.\.$/),
    ]);
    expect([...third!.problems[0]!]).toHaveLength(250);
  });

  it('names at most 10 of the instances sharing a label', () => {
    const items = Array.from({ length: MAX_INSTANCES }, () => instance('telling/pacing'));
    const answer = checkSkillsInput(library, { checked: 'list', items });
    for (const i of answer.instances) {
      expect(i.problems).toEqual(['instance_label "speaker pacing" is used by more than one instance (0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 190 more)']);
    }
  });

  it('stays within the stated bound for the worst input we can build: long escaped labels and skill ids, problems quoting four-byte characters', () => {
    // Each character of the label and skill id takes 6 bytes as JSON (\u0001), each quoted emoji 4:
    // the most bytes per character any problem line or echo can take.
    const worst = Array.from({ length: MAX_INSTANCES }, (_, i) => ({
      skill_id: '\u0001'.repeat(5000),
      instance_label: `${'\u0001'.repeat(196)}${String(i).padStart(4, '0')}`,
      ...unknownKeys(500, (k) => `${'😀'.repeat(100)}${k}`),
    }));
    const answer = checkSkillsInput(library, { checked: 'list', items: worst });
    // 500 unknown keys and a skill the library lacks: 501 problems, of which 4 lines of emoji fit in 1,536 bytes.
    expect(answer.instances.every((i) => i.problems.length === 5 && i.problems[4] === 'and 497 more problems not listed')).toBe(true);
    expect(bytesOf(answer)).toBeGreaterThan(550_000);
    expect(bytesOf(answer)).toBeLessThanOrEqual(ANSWER_BOUND);

    // And many problems of one field: path lists of 300 entries that are not paths.
    const paths = checkSkillsInput(library, {
      checked: 'list',
      items: Array.from({ length: MAX_INSTANCES }, (_, i) => ({
        ...instance('continuity/canon-guard', { instance_label: `canon ${i}` }),
        values: { watch_paths: Array.from({ length: 300 }, (_, k) => `😀${k}`), min_authority: 'author' },
      })),
    });
    expect(paths.instances[0]!.problems.at(-1)).toBe('and 290 more problems not listed');
    expect(bytesOf(paths)).toBeLessThanOrEqual(ANSWER_BOUND);
  });
});
