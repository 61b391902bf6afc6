import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, eventually, freePort, requireEnv, startNodeProcess, waitForAllChecksOk, type ServiceProcess } from '@bus/testing';
import type { StackUrls } from './stack';

export interface RunningBus {
  busUrl: string;
  portalUrl: string;
  /** The running process; a new one after `restart`. */
  readonly process: ServiceProcess;
  env: Record<string, string>;
  /** Starts the process again with the same environment (after it ended, e.g. killed) and waits until it is ready. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const MAIN = 'services/all-in-one/dist/main.js';

/**
 * The whole bus as `npm run up` runs it (the compiled all-in-one process) on its own fresh database,
 * after the same set-up step (migrations, topics). `env` overrides any variable, e.g. REDIS_URL;
 * `servers` are the Postgres (where the database is made), Redis and Kafka it uses, by default the
 * shared ones of .local/stack.env.
 */
export async function startBus(env: Record<string, string> = {}, servers: StackUrls = sharedServers()): Promise<RunningBus> {
  const { database, busPort, fullEnv } = await prepareBus(env, servers);
  let proc = startNodeProcess(MAIN, fullEnv);
  const busUrl = `http://127.0.0.1:${busPort}`;
  await waitForAllChecksOk(busUrl, { process: proc });
  return {
    busUrl,
    portalUrl: `http://127.0.0.1:${fullEnv.PORTAL_PORT}`,
    get process() {
      return proc;
    },
    env: fullEnv,
    restart: async () => {
      proc = startNodeProcess(MAIN, fullEnv);
      await waitForAllChecksOk(busUrl, { process: proc, timeoutMs: 60_000 });
    },
    stop: async () => {
      await proc.stop();
      await database.drop();
    },
  };
}

/** The bus host's services, each its own process as the chart runs them (no portal, no catalogue). */
export const STANDALONE_SERVICES = ['auth', 'gateway', 'pull-api', 'delivery'] as const;
export type StandaloneService = (typeof STANDALONE_SERVICES)[number];

export interface StandaloneBus {
  /** Each process's own address (its routes, /readyz and /metrics). */
  urls: Record<StandaloneService, string>;
  processes: Record<StandaloneService, ServiceProcess>;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The standalone layout (services/<name>/dist/main.js, one process per service, as in Kubernetes) on
 * a fresh database after the same set-up step as startBus; bench/support.js starts it the same way.
 */
export async function startStandaloneBus(env: Record<string, string> = {}, servers: StackUrls = sharedServers()): Promise<StandaloneBus> {
  const { database, busPort, fullEnv } = await prepareBus(env, servers);
  const urls = {} as Record<StandaloneService, string>;
  const processes = {} as Record<StandaloneService, ServiceProcess>;
  for (const service of STANDALONE_SERVICES) {
    // auth keeps the bus port: BUS_BASE_URL (the token issuer) names it.
    const port = service === 'auth' ? busPort : await freePort();
    urls[service] = `http://127.0.0.1:${port}`;
    processes[service] = startNodeProcess(`services/${service}/dist/main.js`, { ...fullEnv, PORT: String(port) });
  }
  const stop = async () => {
    await Promise.all(Object.values(processes).map((p) => p.stop()));
    await database.drop();
  };
  try {
    for (const service of STANDALONE_SERVICES) await waitForAllChecksOk(urls[service], { process: processes[service], timeoutMs: 60_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls, processes, env: fullEnv, stop };
}

export interface ServiceReplica {
  url: string;
  process: ServiceProcess;
}

/**
 * One more process of `service` on a running bus's environment (`env` overriding any variable), as
 * another replica of it would run: its own port, the same database, Redis, Kafka and keys. Resolves
 * once every check of its /readyz is ok.
 */
export async function startReplica(service: StandaloneService, busEnv: Record<string, string>, env: Record<string, string> = {}): Promise<ServiceReplica> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = startNodeProcess(`services/${service}/dist/main.js`, { ...busEnv, PORT: String(port), ...env });
  try {
    await waitForAllChecksOk(url, { process: proc, timeoutMs: 60_000 });
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return { url, process: proc };
}

async function prepareBus(env: Record<string, string>, servers: StackUrls) {
  const database = await createTestDatabase('bus_e2e', servers.DATABASE_URL);
  const busPort = await freePort();
  const portalPort = await freePort();
  const fullEnv = {
    HOST: '127.0.0.1',
    BUS_PORT: String(busPort),
    PORTAL_PORT: String(portalPort),
    DATABASE_URL: database.url,
    REDIS_URL: servers.REDIS_URL,
    // Each bus counts its own limits, so test files running side by side do not share them.
    REDIS_KEY_PREFIX: database.name,
    KAFKA_BROKERS: servers.KAFKA_BROKERS,
    KAFKA_REPLICATION_FACTOR: process.env.KAFKA_REPLICATION_FACTOR ?? '1',
    KAFKA_MESSAGES_PARTITIONS: process.env.KAFKA_MESSAGES_PARTITIONS ?? '3',
    SHUTDOWN_DRAIN_TIMEOUT: '5s',
    BUS_BASE_URL: `http://127.0.0.1:${busPort}`,
    SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    RECEIPT_HANDLE_KEY: randomBytes(32).toString('base64'),
    OPERATOR_CLIENT_ID: 'operator',
    OPERATOR_CLIENT_SECRET: randomBytes(24).toString('hex'),
    ...env,
  };
  await runToCompletion('services/all-in-one/dist/setup.js', fullEnv);
  return { database, busPort, fullEnv };
}

function sharedServers(): StackUrls {
  return { DATABASE_URL: requireEnv('DATABASE_URL'), REDIS_URL: requireEnv('REDIS_URL'), KAFKA_BROKERS: requireEnv('KAFKA_BROKERS') };
}

async function runToCompletion(entry: string, env: Record<string, string>): Promise<void> {
  const proc = startNodeProcess(entry, env);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${entry} exited with ${code}:\n${proc.output()}`);
}

/** A redis-server of the test's own on a free port, so the test can stop and restart it. */
export async function startOwnRedis(port?: number): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const p = port ?? (await freePort());
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(p), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `redis://127.0.0.1:${p}`;
  await waitForPort(p);
  return {
    url,
    port: p,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function waitForPort(port: number): Promise<void> {
  const { connect } = await import('node:net');
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
  await eventually(accepts, (open) => open, { timeoutMs: 10_000, what: `something listening on ${port}` });
}
