import { randomUUID } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';
import { settleDeferredHostLimits } from '@bus/limits';
import { METRICS, type Logger } from '@bus/observability';
import {
  ContentEncodingUnsupportedError,
  DependencyUnavailableError,
  HttpError,
  InternalError,
  MalformedRequestError,
  MethodNotAllowedError,
  RouteNotFoundError,
} from './errors';
import { servedMethods } from './methods';
import { renderError, type ErrorPage, type ErrorRenderer } from './error-bodies';
import { runReadinessChecks, type ReadinessCheck } from './readiness';
import { markStep, requestTimings, sendServerTiming } from './server-timing';

export interface HttpAppOptions {
  /** Names the process in logs and metrics, e.g. `gateway` or `bus` for the all-in-one bus port. */
  name: string;
  logger: Logger;
  /** Served at /metrics. */
  metrics: Registry;
  /**
   * False on every port of a process but one: a process has one registry, and a second port serving
   * it would have Prometheus count every series twice. True when left out.
   */
  serveMetrics?: boolean;
  /** Request counters of the process, shared by every app in it (labelled with `name`). */
  requestMetrics: RequestMetrics;
  readiness: readonly ReadinessCheck[];
  renderError: ErrorRenderer;
  /** Error answers of the routes with a format of their own (HTML pages, AWS JSON); the first that answers a request wins. */
  errorPages?: readonly ErrorPage[];
  /** Run for every request after the operational routes and before the routers (e.g. host-wide limits). */
  middleware?: readonly RequestHandler[];
  /** Mounted in order after the operational routes. */
  routers: readonly Router[];
  readinessTimeoutMs?: number;
}

export interface HttpApp {
  express: Express;
  /** /readyz answers 503 from now on, so load balancers stop sending new work during a drain. */
  startDraining(): void;
  /** The body of an error in this app's shape, for answers written outside express (server.ts). */
  errorBody(err: HttpError, requestId: string): unknown;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createHttpApp(opts: HttpAppOptions): HttpApp {
  const app = express();
  app.disable('x-powered-by');
  // No automatic weak ETag on every answer (a 401, a publish): only documents worth revalidating
  // carry one, through sendCacheable (cacheable.ts).
  app.set('etag', false);
  app.set('trust proxy', false);
  // Paths match exactly as documented, as in every router (router.ts).
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  let draining = false;

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header('x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const timings = requestTimings(res);
    sendServerTiming(res);
    res.on('finish', () => {
      const seconds = timings.totalMs() / 1000;
      const route = routeLabel(req);
      // A route that answered without counting the host limits left to it: counted now, and said.
      const late = settleDeferredHostLimits(res);
      if (late) {
        opts.logger.warn({ request_id: requestId, route }, 'host limits counted after the answer: the route never reached its connection quota');
        late.catch(() => undefined);
      }
      // The service whose route answered (runProcess marks it), so `app` is the same in every layout.
      const service: unknown = res.locals[SERVICE_LOCAL];
      const app = typeof service === 'string' ? service : opts.name;
      opts.requestMetrics.observe(app, req.method, route, res.statusCode, seconds);
      for (const step of timings.recorded()) opts.requestMetrics.observeStep(app, route, step.name, step.ms / 1000);
      // Method, route pattern, status and time only: no headers, no query, no body (they carry secrets).
      opts.logger.info({ request_id: requestId, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request');
    });
    next();
  });

  app.use(refuseAmbiguousRequests);

  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/readyz', async (_req, res) => {
    const report = await runReadinessChecks(opts.readiness, opts.readinessTimeoutMs ?? 2000);
    if (draining) {
      report.ready = false;
      report.checks.process = 'shutting down';
    }
    res.status(report.ready ? 200 : 503).json(report);
  });
  if (opts.serveMetrics ?? true) {
    app.get('/metrics', async (_req, res) => {
      res.type(opts.metrics.contentType).send(await opts.metrics.metrics());
    });
  }

  for (const handler of opts.middleware ?? []) app.use(handler);
  // The host-wide checks (firewall, limits) are a step of their own in Server-Timing.
  if ((opts.middleware ?? []).length > 0) app.use(markStep('limits'));
  for (const router of opts.routers) app.use(router);

  // Nothing matched: a path served for other methods is 405 with Allow, any other path 404.
  app.use((req: Request) => {
    const allowed = servedMethods(app.router, req.path);
    if (allowed.length > 0) throw new MethodNotAllowedError(req.method, req.path, allowed);
    throw new RouteNotFoundError(req.method, req.path);
  });

  const answerError = (err: unknown, req: Request, res: Response): void => {
    const requestId = String(res.locals.requestId);
    const httpError = toHttpError(err);
    if (httpError instanceof InternalError) {
      opts.logger.error({ request_id: requestId, err: describe(err), route: routeLabel(req) }, 'unhandled error');
    } else if (httpError instanceof DependencyUnavailableError) {
      // The one log line of a dependency outage per request: the named error with the dependency's own
      // error as its cause (connection refused, timeout, ...); the answer itself is only the rule.
      opts.logger.warn({ request_id: requestId, err: httpError, route: routeLabel(req) }, 'dependency unavailable');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Refused before its body was read (auth, limits): close rather than let Node drain the body
    // to reuse the connection, so a refused body is never read at all.
    if (hasUnreadBody(req)) res.setHeader('Connection', 'close');
    res.status(httpError.status).set(httpError.headers);
    const page = opts.errorPages?.map((render) => render(req, httpError, requestId)).find((p) => p !== undefined);
    if (page && 'html' in page) res.set(page.headers).type('html').send(page.html);
    else if (page && 'xml' in page) res.set(page.headers).type('text/xml').send(page.xml);
    else if (page) res.set(page.headers).json(page.json);
    else res.json(renderError(httpError, requestId, opts.renderError));
  };

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Host limits left to a connection quota the request never reached (authentication refused it)
    // are counted first: their refusal is the answer, as if they had been counted at once.
    const deferred = settleDeferredHostLimits(res);
    if (!deferred) return answerError(err, req, res);
    deferred
      .then(
        () => err,
        (refusal: unknown) => refusal,
      )
      .then((answer) => answerError(answer, req, res))
      .catch(() => res.destroy());
  });

  return {
    express: app,
    startDraining: () => {
      draining = true;
    },
    errorBody: (err, requestId) => renderError(err, requestId, opts.renderError),
  };
}

function hasUnreadBody(req: Request): boolean {
  const declared = req.headers['content-length'];
  const hasBody = (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
  return hasBody && !req.readableEnded;
}

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  return new InternalError();
}

/** Errors are logged by name and message only: stack traces are fine, request data is not. */
function describe(err: unknown): { name: string; message: string; stack?: string } {
  if (err instanceof Error) return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { name: 'non-error', message: String(err) };
}

/** Where runProcess notes the service that owns the answering route (the `app` label of its metrics). */
export const SERVICE_LOCAL = 'busService';

/**
 * The matched route pattern (bounded label set), never the raw path with its ids. A route of several
 * paths (RFC 8414's two metadata spellings) is labelled with the one requested when it has no
 * parameters, else its first.
 */
function routeLabel(req: Request): string {
  const pattern: unknown = req.route?.path;
  if (typeof pattern === 'string') return `${req.baseUrl}${pattern}`;
  if (Array.isArray(pattern)) {
    const paths = pattern.filter((p): p is string => typeof p === 'string').map((p) => `${req.baseUrl}${p}`);
    const requested = `${req.baseUrl}${req.path}`;
    return paths.find((p) => p === requested) ?? paths[0] ?? 'unmatched';
  }
  return 'unmatched';
}

export interface RequestMetrics {
  observe(app: string, method: string, route: string, status: number, seconds: number): void;
  /** One step of a request (the Server-Timing steps: docs/gateway.md, docs/delivery.md). */
  observeStep(app: string, route: string, step: string, seconds: number): void;
}

/** Registers the HTTP request metrics once per registry; every app of the process reports into them. */
export function createRequestMetrics(registry: Registry): RequestMetrics {
  const requests = new Counter({
    ...METRICS.httpRequests,
    help: 'HTTP requests answered, by route pattern and status',
    registers: [registry],
  });
  const duration = new Histogram({
    ...METRICS.httpRequestDuration,
    help: 'Time from request start to the response finishing',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25],
    registers: [registry],
  });
  const steps = new Histogram({
    ...METRICS.requestStep,
    help: 'Time a request spent in each step of its route (the Server-Timing steps: limits, auth, quota, body, validate, policy, commit; queue on the consumer routes)',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [registry],
  });
  return {
    observe: (app, method, route, status, seconds) => {
      requests.inc({ app, method, route, status: String(status) });
      duration.observe({ app, method, route, status: String(status) }, seconds);
    },
    observeStep: (app, route, step, seconds) => {
      steps.observe({ app, route, step }, seconds);
    },
  };
}

/**
 * Requests no route can read as their sender meant: a target with a malformed percent escape or
 * escaped bytes that are not UTF-8 (express and path-to-regexp would throw decoding it, and the
 * firewall could not read it as any route would), an HTTP/1.1 request with no Host header or more than
 * one (RFC 9112 3.2; the server lets them through to answer here, in JSON), a Transfer-Encoding
 * other than chunked alone (Node's parser reads only the chunked framing and ignores the codings
 * before it, so a gzip-coded body would be read as sent), a body under a Content-Encoding (the bus reads bodies only as sent, so compressed JSON would be refused as not
 * UTF-8 and plain JSON labelled gzip accepted), or two Authorization headers (Node keeps the first;
 * which one the sender meant is unknown).
 */
function refuseAmbiguousRequests(req: Request, _res: Response, next: NextFunction): void {
  if (!decodesAsUtf8(req.url)) throw new MalformedRequestError('the request target has a malformed percent escape or escaped bytes that are not UTF-8');
  const hosts = countHeader(req, 'host');
  if (hosts > 1) throw new MalformedRequestError(`it carries ${hosts} Host headers; send one`);
  if (hosts === 0 && req.httpVersion !== '1.0') throw new MalformedRequestError('an HTTP/1.1 request needs a Host header');
  const transfer = req.headers['transfer-encoding'];
  if (transfer !== undefined && transfer.trim().toLowerCase() !== 'chunked')
    throw new MalformedRequestError('the only Transfer-Encoding read is chunked, alone; send the body uncompressed');
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') throw new ContentEncodingUnsupportedError(encoding);
  const authorizations = countHeader(req, 'authorization');
  if (authorizations > 1) throw new MalformedRequestError(`it carries ${authorizations} Authorization headers; send one`);
  next();
}

/** How many times the request carries header `name` (lower case), as sent: Node keeps only the first of some. */
function countHeader(req: Request, name: string): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === name) count += 1;
  return count;
}

/** Whether every percent escape of `target` is well-formed and the escaped bytes are UTF-8 (decodeURIComponent's own rule). */
function decodesAsUtf8(target: string): boolean {
  try {
    decodeURIComponent(target);
    return true;
  } catch {
    return false;
  }
}
