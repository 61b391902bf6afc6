import type { RequestHandler, Router } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '@bus/observability';
import { createHttpApp, createRequestMetrics, SERVICE_LOCAL } from './app';
import type { ErrorPage, ErrorRenderer } from './error-bodies';
import type { ReadinessCheck } from './readiness';
import { createRouter } from './router';
import { onShutdownSignal, serve, type RunningServer } from './server';

/**
 * What every service factory returns: its routes, what it needs to be ready, and its background
 * work. A process (one service in Kubernetes, all of them locally) decides which port serves which
 * routers; the service does not know whether it runs alone.
 */
export interface Service {
  name: string;
  routers: Router[];
  readiness: ReadinessCheck[];
  /** The error answer of its routes with a format of their own (the portal's pages, the SQS door), if it has any. */
  errorPage?: ErrorPage;
  /** Starts background work (Kafka consumers, sweepers) once the process listens. */
  start?(): Promise<void>;
  /**
   * Answers what its requests wait for (a long poll) now instead of at the wait's end: called as the
   * shutdown starts, once the servers refuse new connections, so the drain ends with those answers
   * rather than cutting their connections at SHUTDOWN_DRAIN_TIMEOUT.
   */
  drain?(): void;
  /** Stops background work; called after the HTTP servers drained. */
  stop?(): Promise<void>;
}

export interface Listener {
  /** Label of this port in logs and metrics: a service name, or `bus` / `portal` locally. */
  name: string;
  host: string;
  port: number;
  services: Service[];
  renderError: ErrorRenderer;
  /** Host-wide request handling before the routers, e.g. the bus host's limits. */
  middleware?: RequestHandler[];
  /** Whether this port serves the process's /metrics (true when left out); one port of a process does. */
  serveMetrics?: boolean;
}

export interface ProcessOptions {
  logger: Logger;
  metrics: Registry;
  listeners: Listener[];
  /** Services without routes (delivery's consumer) still start and stop with the process. */
  background?: Service[];
  drainTimeoutMs: number;
  /** Closes the I/O clients the composition root built, after everything that uses them stopped. */
  closeClients(): Promise<void>;
}

export interface RunningProcess {
  servers: RunningServer[];
  shutdown(): Promise<void>;
}

/**
 * The service's routes, noting the service on each answer they give: the `app` label of the request
 * metrics is then the service's in the all-in-one process too, where one port serves several.
 */
function ownedBy(service: string, router: Router): Router {
  const owned = createRouter();
  const before = `${SERVICE_LOCAL}Before`;
  owned.use((_req, res, next) => {
    res.locals[before] = res.locals[SERVICE_LOCAL];
    res.locals[SERVICE_LOCAL] = service;
    next();
  });
  // Mounted as a layer of its own, so the 405 check (methods.ts) still sees the service's routes.
  owned.use(router);
  // Not a route of this service: the next router's (or the listener's, for no route at all).
  owned.use((_req, res, next) => {
    res.locals[SERVICE_LOCAL] = res.locals[before];
    next();
  });
  return owned;
}

/** Serves every listener, starts every service, and stops all of it in order on shutdown. */
export async function runProcess(opts: ProcessOptions): Promise<RunningProcess> {
  const servers: RunningServer[] = [];
  const requestMetrics = createRequestMetrics(opts.metrics);
  for (const listener of opts.listeners) {
    const app = createHttpApp({
      name: listener.name,
      logger: opts.logger,
      metrics: opts.metrics,
      ...(listener.serveMetrics === undefined ? {} : { serveMetrics: listener.serveMetrics }),
      requestMetrics,
      readiness: listener.services.flatMap((s) => s.readiness),
      routers: listener.services.flatMap((s) => s.routers.map((router) => ownedBy(s.name, router))),
      ...(listener.middleware ? { middleware: listener.middleware } : {}),
      renderError: listener.renderError,
      errorPages: listener.services.flatMap((s) => (s.errorPage ? [s.errorPage] : [])),
    });
    servers.push(await serve(app, { host: listener.host, port: listener.port, logger: opts.logger }));
  }
  const services = [...opts.listeners.flatMap((l) => l.services), ...(opts.background ?? [])];
  for (const service of services) await service.start?.();

  const shutdown = async () => {
    const drained = Promise.all(servers.map((s) => s.close(opts.drainTimeoutMs)));
    for (const service of services) service.drain?.();
    await drained;
    for (const service of services.reverse()) await service.stop?.();
    await opts.closeClients();
  };
  return { servers, shutdown };
}

/**
 * `runProcess` for a composition root: exits when SIGTERM/SIGINT shutdown completes. The signal
 * handler is installed before anything starts, so a signal that arrives while background work is
 * still starting (after /readyz already answers) waits for the start and shuts down cleanly instead
 * of killing the process.
 */
export async function runMain(opts: ProcessOptions): Promise<RunningProcess> {
  const starting = runProcess(opts);
  onShutdownSignal(opts.logger, async () => (await starting).shutdown());
  return starting;
}
