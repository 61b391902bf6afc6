import { freePort, startNodeProcess, waitForHttp } from '@bus/testing';

describe('SIGTERM', () => {
  it('lets an in-flight request finish, refuses new connections, then exits 0', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const inFlight = fetch(`${url}/slow?ms=1500`);
    await new Promise((r) => setTimeout(r, 300));
    proc.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));

    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ finished: true });
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/"msg":"clients closed"/);
  }, 20_000);

  it('cuts requests still running when the drain timeout ends', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port), DRAIN_MS: '300' });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const tooSlow = fetch(`${url}/slow?ms=10000`);
    await new Promise((r) => setTimeout(r, 200));
    proc.child.kill('SIGTERM');
    await expect(tooSlow).rejects.toThrow();
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/drain timeout/);
  }, 20_000);
});
