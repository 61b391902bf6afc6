import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@bus/observability';
import type { HttpApp } from './app';

export interface RunningServer {
  server: Server;
  /** http://host:port as bound (port 0 resolves to the real port). */
  url: string;
  /** Stops accepting, lets in-flight requests finish for up to `drainTimeoutMs`, then cuts the rest. */
  close(drainTimeoutMs: number): Promise<void>;
}

export async function serve(app: HttpApp, opts: { host: string; port: number; logger: Logger }): Promise<RunningServer> {
  const server = createServer(app.express);
  // Long polls hold a request for up to 20 s; keep-alive must outlive the proxies in front of us.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  opts.logger.info({ url }, 'listening');

  return {
    server,
    url,
    close: async (drainTimeoutMs) => {
      app.startDraining();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        opts.logger.warn({ url, drainTimeoutMs }, 'drain timeout: closing remaining connections');
        server.closeAllConnections();
      }, drainTimeoutMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

/**
 * Runs `shutdown` once on the first SIGTERM or SIGINT, then exits 0 (1 if shutdown failed).
 * A second signal exits at once, for an operator who does not want to wait for the drain.
 */
export function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
