import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * kafkajs 2.2.4 sets a negative timer that Node 24 warns about at every start (TimeoutNegativeWarning,
 * kafkajs issue 1751, fixed upstream but unreleased): harmless, so that one warning type is off.
 */
const SERVICE_NODE_FLAGS = ['--disable-warning=TimeoutNegativeWarning'];

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts a compiled entry point (e.g. services/gateway/dist/main.js) with the test's Node and the
 * given environment on top of a minimal one. `npm test` builds before it runs jest. Node runs with the
 * flags every start of the services uses (npm start scripts, deploy/local, the image's entrypoint).
 */
export function startNodeProcess(entry: string, env: Record<string, string>, args: string[] = []): ServiceProcess {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...args, path.join(REPO_ROOT, entry)], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `url` until it answers `status` (default 200) or the deadline passes. */
export async function waitForHttp(url: string, opts: { status?: number; timeoutMs?: number; process?: ServiceProcess } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (opts.process && opts.process.child.exitCode !== null) {
      throw new Error(`process exited with ${opts.process.child.exitCode} before ${url} answered:\n${opts.process.output()}`);
    }
    try {
      const res = await fetch(url);
      if (res.status === (opts.status ?? 200)) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer ${opts.status ?? 200} in time (last: ${last})${opts.process ? `\n${opts.process.output()}` : ''}`);
}

/**
 * Waits until `${baseUrl}/readyz` answers 200 with every check `ok`: ready *and* not degraded (an
 * optional dependency such as Redis may still be connecting after the process is ready).
 */
export async function waitForAllChecksOk(baseUrl: string, opts: { timeoutMs?: number; process?: ServiceProcess } = {}): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (opts.process && opts.process.child.exitCode !== null) {
      throw new Error(`process exited with ${opts.process.child.exitCode} before it was ready:\n${opts.process.output()}`);
    }
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      const body = (await res.json()) as { checks?: Record<string, string> };
      if (res.status === 200 && Object.values(body.checks ?? {}).every((c) => c === 'ok')) return;
      last = JSON.stringify(body);
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${baseUrl}/readyz did not report every check ok in time (last: ${last})`);
}
