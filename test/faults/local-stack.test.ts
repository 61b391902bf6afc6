/**
 * `npm run up` / `npm run down` as a newcomer meets them, beside the servers everyone else uses: a
 * checkout of its own (every entry linked, its own `.local/`) whose Postgres, Redis, Kafka, bus and
 * portal and the portal's local identity provider take seven free ports. The stack starts from nothing (initdb, a freshly formatted Kafka), its
 * output goes to a file as `npm run up > log 2>&1` sends it, the bus is killed and started again, and
 * `npm run down` stops everything. Slow (a Kafka start or two): it is in the fault tier.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, freePort, REPO_ROOT } from '@bus/testing';
import { runCommand, type Ran } from '../support/command';

const START_TIMEOUT_MS = 240_000;

let checkout: string;
let env: Record<string, string>;
let ports: { pg: number; redis: number; kafka: number; controller: number; bus: number; portal: number; oidc: number };
const running: ChildProcess[] = [];

/** A checkout beside the real one, with a `.local/` of its own (the Kafka jars shared, if resolved). */
function checkoutWithOwnLocal(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-stack-'));
  // The `postgres` OS user runs the cluster under .local/ and must be able to enter the directory.
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(REPO_ROOT)) {
    if (entry !== '.local' && entry !== '.git') symlinkSync(path.join(REPO_ROOT, entry), path.join(dir, entry));
  }
  const jars = path.join(REPO_ROOT, '.local/kafka/libs');
  mkdirSync(path.join(dir, '.local/kafka'), { recursive: true });
  if (existsSync(jars)) symlinkSync(jars, path.join(dir, '.local/kafka/libs'));
  return dir;
}

/** A command in the checkout, as the user types it there. */
function run(command: string, args: string[]): Promise<Ran> {
  return runCommand(command, args, { cwd: checkout, env, timeout: START_TIMEOUT_MS });
}

/** `npm run up > <log> 2>&1`: stdout and stderr on one file, in a process group of its own. */
function upToFile(log: string): { child: ChildProcess; exited: Promise<number | null>; log: () => string } {
  const fd = openSync(log, 'w');
  const child = spawn('npm', ['run', 'up'], { cwd: checkout, env, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  running.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
  return { child, exited, log: () => readFileSync(log, 'utf8') };
}

async function untilUp(up: ReturnType<typeof upToFile>): Promise<void> {
  let exited = false;
  void up.exited.then(() => (exited = true));
  await eventually(up.log, (text) => text.includes('message bus is up'), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 250,
    what: 'npm run up to print "message bus is up"',
    abortIf: () => {
      if (exited) throw new Error(`npm run up exited:\n${up.log()}`);
    },
  });
}

const dotenv = (file: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(path.join(checkout, file), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

async function health(): Promise<number> {
  return (await fetch(`http://127.0.0.1:${ports.bus}/v1/health`)).status;
}

beforeAll(async () => {
  checkout = checkoutWithOwnLocal();
  ports = {
    pg: await freePort(),
    redis: await freePort(),
    kafka: await freePort(),
    controller: await freePort(),
    bus: await freePort(),
    portal: await freePort(),
    oidc: await freePort(),
  };
  env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? checkout,
    BUS_PG_PORT: String(ports.pg),
    BUS_REDIS_PORT: String(ports.redis),
    BUS_KAFKA_PORT: String(ports.kafka),
    BUS_KAFKA_CONTROLLER_PORT: String(ports.controller),
    BUS_PORT: String(ports.bus),
    PORTAL_PORT: String(ports.portal),
    OIDC_PORT: String(ports.oidc),
  };
});

afterAll(async () => {
  await run('npm', ['run', 'down']);
  for (const child of running) {
    if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
  }
  rmSync(checkout, { recursive: true, force: true });
}, 120_000);

describe('npm run up and npm run down on a stack of their own', () => {
  it(
    'a failed up stops the servers it started and says so',
    async () => {
      // Another process on the Redis port: Postgres starts, Redis cannot.
      const squatter: Server = createServer();
      await new Promise<void>((resolve) => squatter.listen(ports.redis, '127.0.0.1', resolve));
      try {
        const ran = await run('bash', ['deploy/local/stack.sh', 'up']);
        expect(ran.code).toBe(1);
        expect(ran.stdout).toContain('started: postgres');
        expect(ran.stderr).toContain(`redis: port 127.0.0.1:${ports.redis} is already in use`);
        expect(ran.stderr).toContain('up failed; stopping what this run started: postgres redis');
        expect(ran.stderr).toMatch(/^stopped: postgres$/m);
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
      const status = await run('bash', ['deploy/local/stack.sh', 'status']);
      expect(status).toMatchObject({ code: 3, stdout: 'postgres: stopped\nredis: stopped\nkafka: stopped\n' });
    },
    START_TIMEOUT_MS,
  );

  it(
    'starts from nothing into a log file that is plain text, with no warning or error line; the env files name this stack',
    async () => {
      const up = upToFile(path.join(checkout, 'up-1.log'));
      await untilUp(up);
      // Every line whole and in place: npm's header, stack.sh's progress and results, the bus's start.
      const log = up.log();
      expect(log).not.toContain('\0');
      expect(log).toMatch(/^> up\n> bash deploy\/local\/up\.sh\n/m);
      expect(log).toMatch(new RegExp(`^stack\\.sh: kafka: starting broker on 127\\.0\\.0\\.1:${ports.kafka} `, 'm'));
      expect(log).toMatch(/^started: postgres\nstarted: redis\nstarted: kafka\n/m);
      expect(log).toMatch(/^building \(tsc -b\)$/m);
      expect(log).not.toMatch(/TimeoutNegativeWarning|switched default partitioner|"level":"(warn|error|fatal)"|NOTICE:/);
      expect(await health()).toBe(200);
      expect(dotenv('.local/operator.env')).toMatchObject({ BUSCTL_URL: `http://127.0.0.1:${ports.portal}`, BUSCTL_CLIENT_ID: 'operator' });
      expect(dotenv('.local/demo.env')).toMatchObject({ BUS_BASE_URL: `http://127.0.0.1:${ports.bus}`, PORTAL_URL: `http://127.0.0.1:${ports.portal}` });
      // The portal's sign-in: the local provider runs, and the banner names the demo people.
      expect(log).toMatch(/^ +vendor +Vic Vendor: vendor:odemovendor22$/m);
      expect((await fetch(`http://127.0.0.1:${ports.oidc}/.well-known/openid-configuration`)).status).toBe(200);

      // A crash of the bus: up fails, saying so; the servers keep running.
      const pid = Number(readFileSync(path.join(checkout, '.local/bus.pid'), 'utf8'));
      process.kill(pid, 'SIGKILL');
      expect(await up.exited).not.toBe(0);
      expect(up.log()).toContain('the bus exited with code 137 (its output is above); Postgres, Redis and Kafka keep running');
      expect(existsSync(path.join(checkout, '.local/bus.pid'))).toBe(false);
      // The provider stops with the bus.
      expect(up.log()).toMatch(/^stopped: oidc provider$/m);
      await expect(fetch(`http://127.0.0.1:${ports.oidc}/.well-known/openid-configuration`)).rejects.toThrow();
      expect(await run('bash', ['deploy/local/stack.sh', 'status'])).toMatchObject({ code: 0 });
    },
    START_TIMEOUT_MS,
  );

  it(
    'starts again on the running servers, and npm run down stops the bus and every server',
    async () => {
      const up = upToFile(path.join(checkout, 'up-2.log'));
      await untilUp(up);
      expect(up.log()).toMatch(/^reused: postgres\nreused: redis\nreused: kafka$/m);
      expect(await health()).toBe(200);

      const down = await run('npm', ['run', 'down']);
      expect(down.code).toBe(0);
      expect(down.stdout).toMatch(/^stopped: oidc provider\nstopped: bus\nstopped: postgres\nstopped: redis\nstopped: kafka\n$/m);
      expect(await up.exited).toBe(0);
      expect(up.log()).toMatch(/^the bus stopped$/m);
      await expect(health()).rejects.toThrow();
      expect(await run('bash', ['deploy/local/stack.sh', 'status'])).toMatchObject({ code: 3 });
    },
    START_TIMEOUT_MS,
  );
});
