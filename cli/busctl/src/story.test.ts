import { runStory } from './story';
import type { ValidateIo } from './validate';

/** busctl story export without a server: the export route answered by a fake fetch. The real bus answers in test/busctl.test.ts. */
const ENV = { BUS_BASE_URL: 'http://bus.test', BUS_PRODUCER_CLIENT_ID: 'cproducer2345', BUS_PRODUCER_CLIENT_SECRET: 'sbs_secret' };
const EXPORT_PATH = '/v1/tenants/wworkspace234/stories/story-1/export';
const story = { type: 'story', correlation_id: 'story-1', state: null, state_updated_at: null, exported_at: '2026-11-29T06:00:00.000Z' };
const message = {
  type: 'message',
  message_id: 'm-1',
  message_type: 'telling.started',
  accepted_at: '2026-11-29T06:00:00.000Z',
  producer_connection_id: 'cproducer2345',
  body: '{"a":1}',
  stored: true,
};
const end = { type: 'end', messages: 1, deliveries: 0, bytes: 300, truncated: false };
const ndjson = (lines: unknown[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join('');

function token(): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ tenant: 'wworkspace234' })}.c2ln`;
}

function harness(answer: () => Response) {
  const out = { stdout: '', stderr: '' };
  const files = new Map<string, string>();
  const io: ValidateIo = {
    fetch: (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (url.pathname === '/v1/oauth/token')
        return new Response(JSON.stringify({ access_token: token(), token_type: 'Bearer', expires_in: 3600 }), {
          headers: { 'content-type': 'application/json' },
        });
      expect(url.pathname).toBe(EXPORT_PATH);
      return answer();
    }) as typeof fetch,
    readFile: () => Promise.reject(new Error('not read')),
    readDir: () => Promise.resolve(undefined),
    writeFile: async (path, text) => void files.set(path, text),
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    sleep: async () => undefined,
    now: () => new Date(),
  };
  return { out, files, run: (argv: string[], env: Record<string, string> = ENV) => runStory(argv, env, io) };
}
const ndjsonAnswer = (text: string) => () => new Response(text, { headers: { 'content-type': 'application/x-ndjson' } });

describe('busctl story export', () => {
  it('prints the NDJSON as the bus sent it', async () => {
    const { out, run } = harness(ndjsonAnswer(ndjson([story, message, end])));
    expect(await run(['export', 'story-1'])).toBe(0);
    expect(out.stdout).toBe(ndjson([story, message, end]));
  });

  it('writes it to --out and says what it holds', async () => {
    const { out, files, run } = harness(ndjsonAnswer(ndjson([story, message, end])));
    expect(await run(['export', 'story-1', '--out', 'story.ndjson'])).toBe(0);
    expect(files.get('story.ndjson')).toBe(ndjson([story, message, end]));
    expect(out.stdout).toMatch(/^story story-1: 1 messages, 0 deliveries, \d+ bytes to story\.ndjson\n$/);
  });

  it('exits 1 with the rule for an unknown correlation id', async () => {
    const { out, run } = harness(
      () =>
        new Response(JSON.stringify({ accepted: false, violations: [{ source: 'policy', rule: 'story.unknown', message: 'The workspace holds nothing' }] }), {
          status: 404,
          headers: { 'content-type': 'application/json' },
        }),
    );
    expect(await run(['export', 'story-1'])).toBe(1);
    expect(out.stderr).toBe('busctl: the bus refused (404 story.unknown: The workspace holds nothing)\n');
  });

  it('exits 1 for an answer cut off before its end line, after writing what came', async () => {
    const { out, files, run } = harness(ndjsonAnswer(ndjson([story, message])));
    expect(await run(['export', 'story-1', '--out', 'part.ndjson'])).toBe(1);
    expect(files.get('part.ndjson')).toBe(ndjson([story, message]));
    expect(out.stderr).toMatch(/cut off before its end line/);
  });

  it.each([
    [[], /name a story command: export/],
    [['show', 'story-1'], /unknown story command 'show'/],
    [['export'], /name one correlation id/],
    [['export', 'a', 'b'], /name one correlation id/],
    [['export', 'story-1', '--out', ''], /--out must not be empty/],
  ])('refuses %j as a usage error (exit 2, with the help)', async (argv, problem) => {
    const { out, run } = harness(ndjsonAnswer(''));
    expect(await run(argv)).toBe(2);
    expect(out.stderr).toMatch(problem);
    expect(out.stderr).toContain('Usage: busctl story export');
  });

  it('names a missing credential', async () => {
    const { out, run } = harness(ndjsonAnswer(''));
    expect(await run(['export', 'story-1'], { BUS_BASE_URL: 'http://bus.test' })).toBe(2);
    expect(out.stderr).toMatch(/BUS_PRODUCER_CLIENT_ID is not set/);
  });
});
