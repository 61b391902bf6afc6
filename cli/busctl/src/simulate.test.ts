import { generateStories, type SomMessage } from '@bus/som';
import { runSimulate, type SimulateIo } from './simulate';

/**
 * busctl simulate without a server or real time: the bus's publish route answered by a fake fetch,
 * sleeps recorded and added to a fake clock. The real bus answers in test/busctl.test.ts.
 */
const ENV = {
  BUS_BASE_URL: 'http://bus.test',
  BUS_PRODUCER_CLIENT_ID: 'cproducer2345',
  BUS_PRODUCER_CLIENT_SECRET: 'sbs_secret',
  BUS_SYSTEM_ID: 'storyteller.web',
};
const START = Date.parse('2026-11-29T06:00:00.000Z');

function token(): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ tenant: 'wworkspace234' })}.c2ln`;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** Answers the publish of the n-th request (1-based, retries counted) from `answers`, 202 otherwise; `down`: no answer at all. */
function harness(answers: Record<number, () => Response> = {}, { tokenStatus = 200, down = false } = {}) {
  const out = { stdout: '', stderr: '' };
  const sleeps: number[] = [];
  const sent: SomMessage[] = [];
  let clock = START;
  let requests = 0;
  const io: SimulateIo = {
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      if (down) throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8080') });
      if (url.pathname === '/v1/oauth/token')
        return tokenStatus === 200
          ? json(200, { access_token: token(), token_type: 'Bearer', expires_in: 3600 })
          : json(tokenStatus, { error: 'invalid_client', error_description: 'unknown client or wrong secret' });
      expect(url.pathname).toBe('/v1/tenants/wworkspace234/messages');
      const message = JSON.parse(String(init?.body)) as SomMessage;
      requests++;
      const scripted = answers[requests];
      if (scripted) return scripted();
      sent.push(message);
      return json(202, { accepted: true, message_id: message.message_id, message_type: message.message_type, family: null });
    }) as typeof fetch,
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    now: () => new Date(clock),
  };
  return { out, sleeps, sent, run: (argv: string[], env: Record<string, string> = ENV) => runSimulate(argv, env, io) };
}

const byStory = (messages: readonly SomMessage[]) => {
  const stories = new Map<string, string[]>();
  for (const m of messages) stories.set(m.correlation_id, [...(stories.get(m.correlation_id) ?? []), m.message_id]);
  return stories;
};

describe('busctl simulate', () => {
  it('publishes every generated story, each in its order, the stories interleaved, and exits 0', async () => {
    const h = harness();
    expect(await h.run(['--stories', '4', '--rate', '50', '--seed', '42'])).toBe(0);
    const stories = generateStories({ seed: 42, stories: 4, systemId: 'storyteller.web', now: new Date(START) });
    expect(byStory(h.sent)).toEqual(new Map(stories.map((story) => [story.correlation_id, story.messages.map((m) => m.message_id)])));
    expect(h.sent.every((m) => m.system_id === 'storyteller.web')).toBe(true);
    expect(h.sent.map((m) => m.correlation_id)).not.toEqual(stories.flatMap((story) => story.messages.map((m) => m.correlation_id)));
    expect(h.out.stdout).toMatch(/^Simulating 4 stories, \d+ messages \(seed 42, system_id storyteller\.web\) at most 50 a second to http:\/\/bus\.test/);
    expect(h.out.stdout.match(/^story \d done \(\d\/4 stories\)/gm)).toHaveLength(4);
    expect(h.out.stdout).toContain(`${h.sent.length} messages of 4 stories: ${h.sent.length} accepted, 0 duplicates, 0 refused, 0 not sent`);
    expect(h.out.stderr).toBe('');
  });

  it('keeps to the rate: the sleeps add up to (messages − 1) / rate', async () => {
    const h = harness();
    expect(await h.run(['--stories', '3', '--rate', '4', '--seed', '7'])).toBe(0);
    expect(h.sleeps.every((ms) => ms === 250)).toBe(true);
    expect(h.sleeps).toHaveLength(h.sent.length - 1);
    expect(h.out.stdout).toContain(`in ${((h.sent.length - 1) / 4).toFixed(1)} s (seed 7)`);
  });

  it('waits out a 429 as Retry-After says, then goes on at the rate without catching up', async () => {
    const limited = () =>
      json(429, { accepted: false, violations: [{ source: 'policy', rule: 'rate.limited', message: 'slow down' }] }, { 'retry-after': '3' });
    const h = harness({ 3: limited, 4: limited });
    expect(await h.run(['--stories', '2', '--rate', '2', '--seed', '5'])).toBe(0);
    // Two pauses before the third message, two Retry-After waits, then the interval again: no burst.
    expect(h.sleeps.slice(0, 4)).toEqual([500, 500, 3000, 3000]);
    expect(h.sleeps.slice(4).every((ms) => ms === 500)).toBe(true);
    expect(h.sleeps).toHaveLength(h.sent.length);
  });

  it('publishes the same bodies for the same seed, and others for another', async () => {
    const first = harness();
    const again = harness();
    const other = harness();
    await first.run(['--stories', '3', '--seed', '1234']);
    await again.run(['--stories', '3', '--seed', '1234']);
    await other.run(['--stories', '3', '--seed', '1235']);
    expect(JSON.stringify(again.sent)).toBe(JSON.stringify(first.sent));
    expect(JSON.stringify(other.sent)).not.toBe(JSON.stringify(first.sent));
  });

  it('exits 1 on a refusal, naming the rule, and sends no more of that story', async () => {
    const refused = () =>
      json(409, {
        accepted: false,
        violations: [{ source: 'sequence', rule: 'sequence.telling.already_started', message: 'under way', path: '/message_type' }],
      });
    const h = harness({ 1: refused });
    expect(await h.run(['--stories', '3', '--rate', '100', '--seed', '11'])).toBe(1);
    expect(h.out.stdout).toMatch(
      /^refused 409 sequence\.telling\.already_started \/message_type: under way \(\S+ \S+ of story \d, \S+\); the rest of that story is not sent$/m,
    );
    const total = generateStories({ seed: 11, stories: 3, systemId: 'storyteller.web', now: new Date(START) }).flatMap((s) => s.messages);
    const refusedStory = total.find((m) => !h.sent.some((s) => s.message_id === m.message_id))?.correlation_id;
    expect(h.sent.some((m) => m.correlation_id === refusedStory)).toBe(false);
    const notSent = total.length - h.sent.length - 1;
    expect(h.out.stdout).toContain(`${total.length} messages of 3 stories: ${h.sent.length} accepted, 0 duplicates, 1 refused, ${notSent} not sent`);
  });

  it('refuses to start without what it needs, naming the variable or option (exit 2), sending nothing', async () => {
    const h = harness();
    const { BUS_SYSTEM_ID: _systemId, ...withoutSystem } = ENV;
    expect(await h.run(['--stories', '1'], withoutSystem)).toBe(2);
    expect(h.out.stderr).toMatch(/^busctl: BUS_SYSTEM_ID is not set and no --system-id given/);
    const { BUS_PRODUCER_CLIENT_SECRET: _secret, ...withoutSecret } = ENV;
    expect(await h.run([], withoutSecret)).toBe(2);
    expect(h.out.stderr).toMatch(/busctl: BUS_PRODUCER_CLIENT_SECRET is not set/);
    for (const argv of [
      ['--rate', '0'],
      ['--rate', 'fast'],
      ['--stories', '0'],
      ['--seed=-1'],
      ['--types', 'link.withdrawn'],
      ['--system-id', 'Not Ok'],
      ['--bogus'],
    ]) {
      h.out.stderr = '';
      expect(await h.run(argv)).toBe(2);
      expect(h.out.stderr).toMatch(/^busctl: .+\n\nbusctl simulate: /);
    }
    expect(h.sent).toEqual([]);
  });

  it('exits 1 saying which variables to check when the token route refuses them, or that the bus cannot be reached', async () => {
    const refused = harness({}, { tokenStatus: 401 });
    expect(await refused.run(['--stories', '1'])).toBe(1);
    expect(refused.out.stderr).toMatch(/^busctl: no token for BUS_PRODUCER_CLIENT_ID: token route answered 401 invalid_client/);
    expect(refused.out.stderr).not.toContain('sbs_secret');
    const down = harness({}, { down: true });
    expect(await down.run(['--stories', '1'])).toBe(1);
    expect(down.out.stderr).toBe(
      'busctl: cannot reach the bus at http://bus.test: the token route could not be reached (10 attempts) (connect ECONNREFUSED 127.0.0.1:8080)\n',
    );
  });

  it('prints its help', async () => {
    const h = harness();
    expect(await h.run(['--help'])).toBe(0);
    expect(h.out.stdout).toMatch(/^busctl simulate: /);
  });
});
