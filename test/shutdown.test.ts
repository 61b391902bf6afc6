import { eventually, freePort, startNodeProcess, waitForHttp, type ServiceProcess } from '@bus/testing';

/** Resolves once the slow route has taken a request: signalled after this, the request is in flight. */
const slowRequestStarted = (proc: ServiceProcess) =>
  eventually(
    () => proc.output(),
    (output) => output.includes('"msg":"slow request started"'),
    { timeoutMs: 5_000, what: 'the slow request in flight' },
  );

/** Whether a new request to `url` is refused (the listener closed) rather than answered. */
async function refused(url: string): Promise<boolean> {
  try {
    await (await fetch(url)).arrayBuffer();
    return false;
  } catch {
    return true;
  }
}

describe('SIGTERM', () => {
  it('lets an in-flight request finish, refuses new connections, then exits 0', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const inFlight = fetch(`${url}/slow?ms=1500`);
    await slowRequestStarted(proc);
    proc.child.kill('SIGTERM');

    await eventually(
      () => refused(`${url}/healthz`),
      (isRefused) => isRefused,
      { timeoutMs: 1_000, what: 'new connections refused' },
    );
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ finished: true });
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/"msg":"clients closed"/);
    // The finished request's keep-alive connection was closed with it: the drain did not wait out
    // its timeout (10 s in the fixture) for a connection with nothing left to do.
    expect(proc.output()).not.toMatch(/drain timeout/);
  }, 20_000);

  it('cuts requests still running when the drain timeout ends', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port), DRAIN_MS: '300' });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const tooSlow = fetch(`${url}/slow?ms=10000`);
    await slowRequestStarted(proc);
    proc.child.kill('SIGTERM');
    await expect(tooSlow).rejects.toThrow();
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/drain timeout/);
  }, 20_000);
});
