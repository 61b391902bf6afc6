import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { freePort, REPO_ROOT } from '@bus/testing';

export type StackComponent = 'postgres' | 'redis' | 'kafka';

/** The server addresses a bus is started with. */
export interface StackUrls {
  DATABASE_URL: string;
  REDIS_URL: string;
  KAFKA_BROKERS: string;
}

/** Postgres, Redis and Kafka of a test's own (deploy/local/stack.sh as a second stack), which it may stop at will. */
export interface OwnStack {
  urls: StackUrls;
  /** Stops one server (stack.sh down <component>). */
  stop(component: StackComponent): Promise<void>;
  /** Starts it again on the same port and data (stack.sh up <component>); resolves once it serves. */
  start(component: StackComponent): Promise<void>;
  /** Stops every server and deletes the stack's directory. */
  destroy(): Promise<void>;
}

/**
 * Starts a stack of the test's own: free ports, state under .local/faults-<pid>-<n>/ (BUS_LOCAL_DIR),
 * and none of DATABASE_URL, REDIS_URL, KAFKA_BROKERS passed on, so stack.sh can neither reuse nor
 * stop the shared servers of .local/stack.env. If starting fails, what did start is stopped again.
 */
export async function startOwnStack(name: string): Promise<OwnStack> {
  const dir = path.join(REPO_ROOT, '.local', `${name}-${process.pid}-${Date.now().toString(36)}`);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !['DATABASE_URL', 'REDIS_URL', 'KAFKA_BROKERS'].includes(key)) env[key] = value;
  }
  Object.assign(env, {
    BUS_LOCAL_DIR: dir,
    BUS_PG_PORT: String(await freePort()),
    BUS_REDIS_PORT: String(await freePort()),
    BUS_KAFKA_PORT: String(await freePort()),
    BUS_KAFKA_CONTROLLER_PORT: String(await freePort()),
  });
  const stack = (...args: string[]) => runStackScript(args, env);
  const destroy = async () => {
    await stack('down');
    await rm(dir, { recursive: true, force: true });
  };
  let printed: string;
  try {
    printed = await stack('up');
  } catch (err) {
    await destroy().catch(() => undefined);
    throw err;
  }
  const line = (variable: keyof StackUrls) => {
    const found = new RegExp(`^${variable}=(.+)$`, 'm').exec(printed)?.[1];
    if (!found) throw new Error(`stack.sh up printed no ${variable}:\n${printed}`);
    return found;
  };
  return {
    urls: { DATABASE_URL: line('DATABASE_URL'), REDIS_URL: line('REDIS_URL'), KAFKA_BROKERS: line('KAFKA_BROKERS') },
    stop: async (component) => {
      await stack('down', component);
    },
    start: async (component) => {
      await stack('up', component);
    },
    destroy,
  };
}

function runStackScript(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [path.join(REPO_ROOT, 'deploy', 'local', 'stack.sh'), ...args], { env, timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`stack.sh ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
