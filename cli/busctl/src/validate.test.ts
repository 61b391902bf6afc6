import { validate as validateCtrf } from 'ctrf';
import { som } from '@bus/schemas';
import { runValidate, type ValidateIo } from './validate';

/**
 * busctl validate without a server: the bus's answers scripted per file, the files in memory. The
 * real bus answers in test/busctl.test.ts; here the table, the exit codes, the ordered mode's story
 * and the reports are checked for every kind of answer.
 */
const ENV = { BUS_BASE_URL: 'http://bus.test', BUS_PRODUCER_CLIENT_ID: 'cproducer2345', BUS_PRODUCER_CLIENT_SECRET: 'sbs_secret' };

function token(): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ tenant: 'wworkspace234' })}.c2ln`;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

function message(type: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...(som.examples[type] as object), ...overrides });
}

/** Answers each validate by the message_type of the body sent, from `answers` (202 dry run by default). */
function harness(files: Record<string, string>, answers: Record<string, Array<() => Response>> = {}) {
  const out = { stdout: '', stderr: '' };
  const written: Record<string, string> = {};
  const sleeps: number[] = [];
  const sent: string[] = [];
  let clock = Date.parse('2026-11-29T06:00:00.000Z');
  const io: ValidateIo = {
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      if (url.pathname === '/v1/oauth/token') return json(200, { access_token: token(), token_type: 'Bearer', expires_in: 3600 });
      expect(url.pathname).toBe('/v1/tenants/wworkspace234/validate');
      const body = Buffer.from(init?.body as Uint8Array).toString('utf8');
      sent.push(body);
      clock += 7;
      let type: string | undefined;
      try {
        type = (JSON.parse(body) as { message_type?: string }).message_type;
      } catch {
        return json(400, { accepted: false, violations: [{ source: 'schema', rule: 'schema.json', message: 'not JSON' }] });
      }
      const scripted = answers[type ?? '']?.shift();
      return scripted ? scripted() : json(202, { accepted: true, message_id: 'm', message_type: type, family: null, dry_run: true });
    }) as typeof fetch,
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return Buffer.from(text);
    },
    readDir: async (path) => {
      const prefix = `${path}/`;
      const names = Object.keys(files)
        .filter((f) => f.startsWith(prefix))
        .map((f) => f.slice(prefix.length));
      return names.length > 0 ? names : undefined;
    },
    writeFile: async (path, text) => void (written[path] = text),
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    sleep: async (ms) => void sleeps.push(ms),
    now: () => new Date(clock),
  };
  return { out, written, sleeps, sent, run: (argv: string[], env: Record<string, string> = ENV) => runValidate(argv, env, io) };
}

const sequenceRefusal = (rule: string) => () => json(409, { accepted: false, violations: [{ source: 'sequence', rule, message: 'as the workspace stands' }] });

describe('busctl validate', () => {
  it('sends a directory in name order, prints a table and exits 0 when every file is accepted', async () => {
    const h = harness({ 'corpus/b.json': message('telling.started'), 'corpus/a.json': message('story.context'), 'corpus/notes.txt': 'skipped' });
    expect(await h.run(['corpus'])).toBe(0);
    expect(h.out.stdout).toBe(
      [
        'FILE           TYPE             RESULT',
        'corpus/a.json  story.context    accepted',
        'corpus/b.json  telling.started  accepted',
        '',
        '2 checked: 2 accepted, 0 refused, 0 not checked',
        '',
      ].join('\n'),
    );
    expect(h.sent.map((b) => (JSON.parse(b) as { message_type: string }).message_type)).toEqual(['story.context', 'telling.started']);
  });

  it('sends the bytes of each file as they are, and exits 1 naming the rule and path of a refusal', async () => {
    const refused = () =>
      json(400, {
        accepted: false,
        violations: [
          { source: 'schema', rule: 'schema.required', message: "must have required property 'story_id'", path: '/payload' },
          { source: 'schema', rule: 'schema.type', message: 'must be string', path: '/payload/title' },
        ],
      });
    const bytes = `${message('story.context')}\n`;
    const h = harness({ 'ok.json': bytes, 'bad.json': message('telling.started'), 'broken.json': '{"message_type":' }, { 'telling.started': [refused] });
    expect(await h.run(['ok.json', 'bad.json', 'broken.json'])).toBe(1);
    expect(h.sent[0]).toBe(bytes);
    expect(h.out.stdout).toContain('bad.json     telling.started  refused 400 schema.required /payload (+1)');
    expect(h.out.stdout).toContain('broken.json  -                refused 400 schema.json');
    expect(h.out.stdout).toContain('3 checked: 1 accepted, 2 refused, 0 not checked');
  });

  it('waits out a 429 as Retry-After says and sends the file again', async () => {
    const limited = () =>
      json(429, { accepted: false, violations: [{ source: 'policy', rule: 'rate.limited', message: 'slow down' }] }, { 'retry-after': '2' });
    const h = harness({ 'a.json': message('story.context') }, { 'story.context': [limited, limited] });
    expect(await h.run(['a.json'])).toBe(0);
    expect(h.sleeps).toEqual([2000, 2000]);
    expect(h.sent).toHaveLength(3);
  });

  it('--ordered judges the sequence by the files before, not by the workspace: a story valid from its start passes', async () => {
    const started = message('telling.started');
    const exposed = message('telling.exposed');
    // The workspace's own story would refuse both (a telling already under way there).
    const h = harness(
      { 'story/1.json': started, 'story/2.json': exposed },
      { 'telling.started': [sequenceRefusal('sequence.telling.already_started')], 'telling.exposed': [sequenceRefusal('sequence.telling.ended')] },
    );
    expect(await h.run(['--ordered', 'story'])).toBe(0);
    expect(h.out.stdout).toContain('2 checked: 2 accepted, 0 refused');
  });

  it('--ordered refuses a file the earlier ones make out of sequence, with the rule the bus would give', async () => {
    const h = harness({ 'story/1.json': message('telling.exposed') });
    expect(await h.run(['--ordered', 'story', '--json'])).toBe(1);
    expect(JSON.parse(h.out.stdout)).toEqual([
      expect.objectContaining({
        file: 'story/1.json',
        outcome: 'refused',
        status: 409,
        violations: [expect.objectContaining({ rule: 'sequence.telling.not_started' })],
      }),
    ]);
  });

  it('writes JUnit and CTRF reports with one case per file, a refusal as a failure carrying its violations', async () => {
    const refused = () =>
      json(403, { accepted: false, violations: [{ source: 'policy', rule: 'policy.message_type_not_allowed', message: 'not <allowed> & "no"' }] });
    const h = harness({ 'a.json': message('story.context'), 'b.json': message('system.audit') }, { 'system.audit': [refused] });
    expect(await h.run(['a.json', 'b.json', '--junit', 'out/junit.xml', '--ctrf', 'out/ctrf.json'])).toBe(1);

    const junit = h.written['out/junit.xml'] as string;
    expect(junit).toContain('<testsuites name="busctl validate" tests="2" failures="1" errors="0"');
    expect(junit).toContain('<testcase name="a.json" classname="story.context" time="0.007"/>');
    expect(junit).toContain(
      '<failure message="403 policy.message_type_not_allowed">policy.message_type_not_allowed: not &lt;allowed&gt; &amp; &quot;no&quot;</failure>',
    );

    const ctrf = JSON.parse(h.written['out/ctrf.json'] as string) as unknown;
    expect(validateCtrf(ctrf)).toMatchObject({ valid: true });
    expect(ctrf).toMatchObject({
      results: {
        tool: { name: 'busctl validate' },
        summary: { tests: 2, passed: 1, failed: 1, other: 0 },
        tests: [
          { name: 'a.json', status: 'passed', suite: ['story.context'] },
          { name: 'b.json', status: 'failed', message: '403 policy.message_type_not_allowed', trace: 'policy.message_type_not_allowed: not <allowed> & "no"' },
        ],
      },
    });
  });

  it('refuses to start without the producer credentials, naming the variable (exit 2)', async () => {
    const h = harness({ 'a.json': message('story.context') });
    expect(await h.run(['a.json'], { BUS_PRODUCER_CLIENT_ID: 'cproducer2345' })).toBe(2);
    expect(h.out.stderr).toMatch(/^busctl: BUS_PRODUCER_CLIENT_SECRET is not set/);
    expect(await h.run([], ENV)).toBe(2);
    expect(await h.run(['empty-dir-or-missing.json', '--junit', ''], ENV)).toBe(2);
    expect(h.sent).toEqual([]);
  });

  it('counts an unreadable file as not checked, and keeps going', async () => {
    const h = harness({ 'a.json': message('story.context') });
    expect(await h.run(['missing.json', 'a.json'])).toBe(1);
    expect(h.out.stdout).toContain("missing.json  -              not checked: cannot read it: ENOENT: no such file or directory, open 'missing.json'");
    expect(h.out.stdout).toContain('2 checked: 1 accepted, 0 refused, 1 not checked');
  });
});
