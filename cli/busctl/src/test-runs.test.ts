import { runTestRuns } from './test-runs';

/**
 * busctl run without a server: usage errors and the bus's refusal as busctl words them. The real bus
 * answers in test/test-runs.test.ts.
 */
const ENV = { BUS_BASE_URL: 'http://bus.test', BUS_PRODUCER_CLIENT_ID: 'cproducer2345', BUS_PRODUCER_CLIENT_SECRET: 'sbs_secret' };

function token(): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ tenant: 'wworkspace234' })}.c2ln`;
}

function harness(answer: (url: URL, init?: RequestInit) => Response) {
  const out = { stdout: '', stderr: '', files: {} as Record<string, string> };
  const io = {
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input));
      if (url.pathname === '/v1/oauth/token') return Response.json({ access_token: token(), token_type: 'Bearer', expires_in: 3600 });
      return answer(url, init);
    }) as typeof fetch,
    now: () => new Date('2026-11-29T06:00:00.000Z'),
    sleep: async () => {},
    stdout: (text: string) => void (out.stdout += text),
    stderr: (text: string) => void (out.stderr += text),
    writeFile: async (path: string, text: string) => void (out.files[path] = text),
  };
  return { io, out };
}

const unreachable = () => {
  throw new Error('no request expected');
};

describe('busctl run', () => {
  it.each([
    [['start'], '--label is required'],
    [['start', '--label', 'x', '--duration', '2d'], '--duration must be'],
    [['stop'], "busctl run stop needs the run's id"],
    [['report', 'r', 'extra'], "unexpected argument 'extra'"],
    [['rerun', 'r'], "unknown command 'run rerun'"],
    [['report', 'r', '--html', 'f'], "Unknown option '--html'"],
  ])('%j is a usage error (exit 2): %s', async (argv, problem) => {
    const { io, out } = harness(unreachable);
    expect(await runTestRuns(argv, ENV, io)).toBe(2);
    expect(out.stderr).toContain(problem);
  });

  it('names a missing credential', async () => {
    const { io, out } = harness(unreachable);
    expect(await runTestRuns(['stop', 'r'], { BUS_BASE_URL: 'http://bus.test' }, io)).toBe(2);
    expect(out.stderr).toContain('BUS_PRODUCER_CLIENT_ID is not set');
  });

  it("sends a start's label and duration and prints the run", async () => {
    let sent: unknown;
    const run = {
      id: '0b8e2b9a-7f55-4c43-9a5e-2f2d0c0c6a11',
      label: 'nightly',
      workspace_id: 'wworkspace234',
      opened_by: 'cproducer2345',
      started_at: '2026-11-29T06:00:00.000Z',
      ends_at: '2026-11-29T07:00:00.000Z',
      stopped_at: null,
      state: 'open',
    };
    const { io, out } = harness((url, init) => {
      expect([init?.method, url.pathname]).toEqual(['POST', '/v1/tenants/wworkspace234/runs']);
      sent = JSON.parse(String(init?.body));
      return Response.json(run, { status: 201 });
    });
    expect(await runTestRuns(['start', '--label', 'nightly', '--duration', '1h'], ENV, io)).toBe(0);
    expect(sent).toEqual({ label: 'nightly', duration_seconds: 3600 });
    expect(out.stdout).toMatch(/^id +0b8e2b9a-7f55-4c43-9a5e-2f2d0c0c6a11$/m);
    expect(out.stdout).toMatch(/^state +open$/m);
  });

  it("words the bus's refusal and exits 1", async () => {
    const { io, out } = harness(() =>
      Response.json({ accepted: false, violations: [{ source: 'policy', rule: 'run.unknown', message: 'The workspace has no test run r' }] }, { status: 404 }),
    );
    expect(await runTestRuns(['report', 'r', '--junit', 'out.xml'], ENV, io)).toBe(1);
    expect(out.stderr).toBe('busctl: the bus refused: 404 run.unknown: The workspace has no test run r\n');
    expect(out.files).toEqual({});
  });
});
