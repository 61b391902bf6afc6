import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@bus/testing';
import { hangUpSignal } from './pull-routes';

/** A loopback server whose handler takes each request's hang-up signal and answers only when `answer` says so. */
function serverOf(answer: boolean): { server: Server; seen: Array<{ signal: AbortSignal; closed: boolean }> } {
  const seen: Array<{ signal: AbortSignal; closed: boolean }> = [];
  const server = createServer((_req, res) => {
    const entry = { signal: hangUpSignal(res), closed: false };
    res.on('close', () => (entry.closed = true));
    seen.push(entry);
    if (answer) res.end('{}');
  });
  return { server, seen };
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closed(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

describe('hangUpSignal', () => {
  it('stays unaborted when the answer was written, after the response closed', async () => {
    const { server, seen } = serverOf(true);
    const port = await listening(server);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(await res.text()).toBe('{}');
      await eventually(
        () => seen[0]?.closed ?? false,
        (isClosed) => isClosed,
        { what: 'the response closed on the server' },
      );
      expect(seen[0]?.signal.aborted).toBe(false);
    } finally {
      await closed(server);
    }
  });

  it('aborts when the client hangs up before the answer', async () => {
    const { server, seen } = serverOf(false);
    const port = await listening(server);
    try {
      const pending = request({ host: '127.0.0.1', port, path: '/' });
      pending.on('error', () => undefined);
      pending.end();
      await eventually(
        () => seen.length,
        (n) => n === 1,
        { what: 'the request in the handler' },
      );
      pending.destroy();
      await eventually(
        () => seen[0]?.signal.aborted ?? false,
        (aborted) => aborted,
        { what: 'the hang-up seen' },
      );
    } finally {
      await closed(server);
    }
  });
});
