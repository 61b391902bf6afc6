import { ConfigError, loadConfig, processConfig, type ConfigOf, type ConfigSpec } from '@bus/config';
import { createLogger, createMetricsRegistry, type Logger, type Registry, type Tracing } from '@bus/observability';
import { runMain, type Listener, type Service } from './service';

type ProcessConfig = ConfigOf<typeof processConfig>;

export interface CompositionContext<C> {
  config: C & ProcessConfig;
  logger: Logger;
  metrics: Registry;
  /** Registers a client to close at shutdown; closed in reverse order of registration. */
  onClose(close: () => Promise<unknown> | void): void;
}

export interface Composition {
  listeners: Listener[];
  background?: Service[];
}

/**
 * The shared start-up of every composition root: validate the whole environment first (a bad variable
 * stops the process with a message naming it, before any client connects), then logging and metrics,
 * then the caller's `compose` builds clients and services, then serve until SIGTERM.
 */
export async function bootstrap<S extends ConfigSpec>(opts: {
  name: string;
  /** Started by the root's first import (see startTracingFromEnv); flushed at shutdown. */
  tracing: Tracing;
  config: S;
  compose(ctx: CompositionContext<ConfigOf<S>>): Promise<Composition>;
}): Promise<void> {
  let config: ConfigOf<S> & ProcessConfig;
  try {
    config = loadConfig({ ...processConfig, ...opts.config }) as ConfigOf<S> & ProcessConfig;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${opts.name}: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ service: opts.name, level: config.LOG_LEVEL });
  logger.info({ node: process.version, pid: process.pid, tracing: opts.tracing.enabled }, 'starting');
  const metrics = createMetricsRegistry();
  const closers: Array<() => Promise<unknown> | void> = [() => opts.tracing.shutdown()];
  try {
    const composition = await opts.compose({ config, logger, metrics, onClose: (close) => closers.push(close) });
    await runMain({
      logger,
      metrics,
      ...composition,
      drainTimeoutMs: config.SHUTDOWN_DRAIN_TIMEOUT,
      closeClients: async () => {
        for (const close of closers.reverse()) await close();
      },
    });
  } catch (err) {
    // A setting whose check needs another one (or a file it names) is found while composing: still a
    // configuration error, reported and ended like one.
    if (err instanceof ConfigError) {
      process.stderr.write(`${opts.name}: ${err.message}\n`);
      process.exit(2);
    }
    logger.fatal({ err }, 'start-up failed');
    process.exit(1);
  }
}
