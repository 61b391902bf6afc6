import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { eventually } from './eventually';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Ports this process handed out. The kernel hands a port it just gave and got back out again readily
 * (3 repeats in 200 binds on this machine), and two servers told the same port collide at start-up.
 */
const handedOut = new Set<number>();
const MAX_PORT_ATTEMPTS = 100;

/** A TCP port that was free a moment ago on 127.0.0.1 and that this process has not handed out before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < MAX_PORT_ATTEMPTS; attempt++) {
    const port = await unusedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no port this process had not handed out already in ${MAX_PORT_ATTEMPTS} tries`);
}

function unusedPort(): Promise<number> {
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
 * Every process a test file started, by entry point, on the file's own global: the tiers' jest
 * environment (test/support/environment.js) adds what they logged at warning level or worse to the
 * report of a test that fails.
 */
const STARTED_PROCESSES_KEY = '__busStartedProcesses';

function startedProcesses(): Set<{ name: string; output(): string }> {
  const scope = globalThis as { [STARTED_PROCESSES_KEY]?: Set<{ name: string; output(): string }> };
  return (scope[STARTED_PROCESSES_KEY] ??= new Set());
}

/**
 * The Node flags a bus process runs with, by entry point, as the chart's deployments (NODE_OPTIONS)
 * and the services' start scripts give them (test/chart.test.ts holds them to this list). Delivery's
 * semi-spaces are capped at 16 MB: V8 grew them to 64 MB while it caught up with a topic's history,
 * and from then on started a major GC every ~0.3 s, because the old generation's room to its limit was
 * smaller than the young generation (docs/operations.md, "V8's young generation in delivery").
 */
export const BUS_NODE_FLAGS: Readonly<Record<string, readonly string[]>> = {
  'services/delivery/dist/main.js': ['--max-semi-space-size=16'],
};

/**
 * Starts a compiled entry point (e.g. services/gateway/dist/main.js) with the test's Node, the bus's
 * Node flags and the given environment on top of a minimal one. `npm test` builds before it runs jest.
 */
export function startNodeProcess(entry: string, env: Record<string, string>, args: string[] = []): ServiceProcess {
  return startProcess(entry, process.execPath, [...(BUS_NODE_FLAGS[entry] ?? []), ...args, path.join(REPO_ROOT, entry)], { LOG_LEVEL: 'info', ...env });
}

/** Starts any executable (e.g. a built OpenTelemetry Collector) with the given environment on top of PATH; `name` names it in reports. */
export function startProcess(name: string, command: string, args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  startedProcesses().add({ name, output: () => output });
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

/** Waits until `url` answers `status` (default 200); stops at once if `opts.process` exits first. */
export async function waitForHttp(url: string, opts: { status?: number; timeoutMs?: number; process?: ServiceProcess } = {}): Promise<void> {
  const expected = opts.status ?? 200;
  await eventuallyWhileRunning(
    opts.process,
    async () => {
      const res = await fetch(url);
      await res.arrayBuffer();
      return res.status;
    },
    (status) => status === expected,
    { timeoutMs: opts.timeoutMs ?? 30_000, what: `${url} answering ${expected}` },
  );
}

/**
 * Waits until `${baseUrl}/readyz` answers 200 with every check `ok`: ready *and* not degraded (an
 * optional dependency such as Redis may still be connecting after the process is ready).
 */
export async function waitForAllChecksOk(baseUrl: string, opts: { timeoutMs?: number; process?: ServiceProcess } = {}): Promise<void> {
  await eventuallyWhileRunning(
    opts.process,
    async () => {
      const res = await fetch(`${baseUrl}/readyz`);
      return { status: res.status, body: (await res.json()) as { checks?: Record<string, string> } };
    },
    ({ status, body }) => status === 200 && Object.values(body.checks ?? {}).every((check) => check === 'ok'),
    { timeoutMs: opts.timeoutMs ?? 30_000, what: `${baseUrl}/readyz reporting every check ok` },
  );
}

/**
 * `eventually` on what a process answers: it stops at once when `proc` has exited (nothing can come
 * any more), and either failure carries what the process wrote, which usually says why.
 */
async function eventuallyWhileRunning<T>(
  proc: ServiceProcess | undefined,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  opts: { timeoutMs: number; what: string },
): Promise<T> {
  const exited = () => {
    const code = proc?.child.exitCode ?? proc?.child.signalCode ?? null;
    if (code !== null) throw new Error(`process exited (${code}) before ${opts.what}`);
  };
  try {
    return await eventually(read, done, { ...opts, intervalMs: 100, abortIf: exited });
  } catch (err) {
    if (!proc || !(err instanceof Error)) throw err;
    throw new Error(`${err.message}\n${proc.output()}`, { cause: err });
  }
}
