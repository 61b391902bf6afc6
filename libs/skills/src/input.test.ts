import { MAX_BODY_BYTES, readSkillsBody } from './input';

const bytes = (text: string) => new TextEncoder().encode(text);
const read = (text: string, contentType?: string) => readSkillsBody(bytes(text), contentType);
const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';
const INSTANCE = { skill_id: 'telling/pacing', instance_label: 'p' };

describe('the input forms of docs/api.md#skill-catalogue', () => {
  it('reads JSON {instance}', () => {
    expect(read(JSON.stringify({ instance: INSTANCE }), JSON_TYPE)).toEqual({ ok: true, input: { checked: 'instance', instance: INSTANCE } });
  });

  it('reads JSON {skills: [...]} and a bare JSON array as a list', () => {
    expect(read(JSON.stringify({ skills: [INSTANCE] }), JSON_TYPE)).toEqual({ ok: true, input: { checked: 'list', items: [INSTANCE] } });
    expect(read(JSON.stringify([INSTANCE]), 'application/json; charset=utf-8')).toEqual({ ok: true, input: { checked: 'list', items: [INSTANCE] } });
  });

  it('reads JSON {yaml: text} as a skills file', () => {
    const yaml = 'skills:\n  - skill_id: telling/pacing\n    instance_label: p\n';
    expect(read(JSON.stringify({ yaml }), JSON_TYPE)).toEqual({ ok: true, input: { checked: 'file', items: [INSTANCE] } });
    expect(read(JSON.stringify({ yaml: '- skill_id: telling/pacing\n  instance_label: p\n' }), JSON_TYPE)).toEqual({
      ok: true,
      input: { checked: 'file', items: [INSTANCE] },
    });
  });

  it('reads an application/yaml body with a skills: section, or a bare list', () => {
    const file = '# house skills\nhouse: harbour-tales\nskills:\n  - skill_id: telling/pacing\n    instance_label: p\n';
    expect(read(file, YAML_TYPE)).toEqual({ ok: true, input: { checked: 'file', items: [INSTANCE] } });
    expect(read('- skill_id: telling/pacing\n  instance_label: p\n', 'text/yaml')).toEqual({ ok: true, input: { checked: 'file', items: [INSTANCE] } });
    expect(read('skills:\n', 'application/x-yaml')).toEqual({ ok: true, input: { checked: 'file', items: [] } });
  });

  it('keeps the section as it is when it is not a list: the checker answers that as a problem', () => {
    expect(read('skills: 5\n', YAML_TYPE)).toEqual({ ok: true, input: { checked: 'file', items: 5 } });
    expect(read('{"skills": {"a": 1}}', JSON_TYPE)).toEqual({ ok: true, input: { checked: 'list', items: { a: 1 } } });
  });

  it('reads YAML with the core schema: no yes/no booleans, no surprises', () => {
    expect(read('- {skill_id: telling/pacing, instance_label: "no", values: {flag: no, n: 010}}\n', YAML_TYPE)).toEqual({
      ok: true,
      input: { checked: 'file', items: [{ skill_id: 'telling/pacing', instance_label: 'no', values: { flag: 'no', n: 10 } }] },
    });
  });

  it('reads a body without a JSON or YAML type as JSON when it parses, else as YAML', () => {
    expect(read(JSON.stringify({ instance: INSTANCE }), 'text/plain')).toEqual({ ok: true, input: { checked: 'instance', instance: INSTANCE } });
    expect(read('skills: []\n', undefined)).toEqual({ ok: true, input: { checked: 'file', items: [] } });
  });

  it('strips a UTF-8 byte order mark', () => {
    expect(readSkillsBody(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('[]')]), JSON_TYPE)).toEqual({ ok: true, input: { checked: 'list', items: [] } });
  });
});

describe('unreadable bodies (400 skills.unreadable)', () => {
  it.each([
    ['', JSON_TYPE, 'The body is empty'],
    [' \n\t ', YAML_TYPE, 'The body is empty'],
    ['{"instance": ', JSON_TYPE, 'The body is not JSON (Content-Type application/json)'],
    ['{"skills": [}', 'text/plain', 'The body is neither JSON nor YAML'],
    ['skills: [1, 2\n', YAML_TYPE, expect.stringMatching(/^The body is not YAML \([A-Z_]+ at line \d+, column \d+\)$/)],
    ['skills: []\nskills: []\n', YAML_TYPE, expect.stringMatching(/^The body is not YAML \(DUPLICATE_KEY/)],
    ['a: 1\n---\nb: 2\n', YAML_TYPE, expect.stringMatching(/^The body is not YAML/)],
    ['house: harbour-tales\n', YAML_TYPE, 'The body has no skills: section and is not a list'],
    ['just words', undefined, 'The body has no skills: section and is not a list'],
    ['"a string"', JSON_TYPE, 'The body is JSON a string, not an object with instance, skills or yaml, nor a list'],
    ['{"house": "x"}', JSON_TYPE, 'The body has none of instance, skills or yaml, and is not a list'],
    ['{"instance": {}, "skills": []}', JSON_TYPE, 'The body has instance and skills: send one of instance, skills or yaml'],
    ['{"yaml": 5}', JSON_TYPE, 'yaml must be the text of a skills file, got a number'],
    ['{"yaml": "  "}', JSON_TYPE, 'The yaml text is empty'],
    ['{"yaml": "house: x"}', JSON_TYPE, 'The yaml text has no skills: section and is not a list'],
    ['{"yaml": "skills: ["}', JSON_TYPE, expect.stringMatching(/^The yaml text is not YAML/)],
  ])('refuses %j (%s)', (body, type, reason) => {
    expect(read(body, type)).toEqual({ ok: false, reason });
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(readSkillsBody(new Uint8Array([0x5b, 0xff, 0x5d]), JSON_TYPE)).toEqual({ ok: false, reason: 'The body is not UTF-8 text' });
  });

  it('reads 256 KB and refuses one byte more', () => {
    const atLimit = `[${' '.repeat(MAX_BODY_BYTES - 2)}]`;
    expect(MAX_BODY_BYTES).toBe(262_144);
    expect(read(atLimit, JSON_TYPE)).toEqual({ ok: true, input: { checked: 'list', items: [] } });
    expect(read(`${atLimit} `, JSON_TYPE)).toEqual({ ok: false, reason: 'The body is over 262144 bytes (256 KB)' });
  });

  it('never quotes the body in a reason', () => {
    const marker = 'MARKER-7f3a9c-do-not-echo';
    for (const [body, type] of [
      [`{"instance": "${marker}`, JSON_TYPE],
      [`${marker}: [1, 2`, YAML_TYPE],
      [`${marker}: 1\n${marker}: 2`, YAML_TYPE],
      [`{"yaml": "${marker}: ["}`, JSON_TYPE],
      [`{"${marker}": 1}`, JSON_TYPE],
      [`{"yaml": "${marker}"}`, JSON_TYPE],
    ] as const) {
      const result = read(body, type);
      expect(result.ok).toBe(false);
      expect(JSON.stringify(result)).not.toContain(marker);
    }
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    levels.push('skills: *i');
    expect(read(levels.join('\n'), YAML_TYPE)).toEqual({ ok: false, reason: expect.stringMatching(/^The body is not YAML/) });
  });
});
