import { randomUUID } from 'node:crypto';
import { createServer, ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '@bus/observability';
import type { HttpApp } from './app';
import { holdContinue } from './body';
import { ExpectationFailedError, MalformedRequestError, RequestHeadersTooLargeError, RequestTimeoutError, RouteNotFoundError, type HttpError } from './errors';

export interface RunningServer {
  server: Server;
  /** http://host:port as bound (port 0 resolves to the real port). */
  url: string;
  /** Stops accepting, lets in-flight requests finish for up to `drainTimeoutMs`, then cuts the rest. */
  close(drainTimeoutMs: number): Promise<void>;
}

/** How long a client may take to send a request, in milliseconds (docs/errors.md, 408 request.timeout). */
export interface RequestTimeouts {
  /** From a request's first byte to the end of its headers. */
  headersMs: number;
  /** From a request's first byte to the end of its body: the whole request. */
  requestMs: number;
  /** How often Node looks for requests past either bound: a stalled request is answered within this much of it. */
  checkEveryMs: number;
}

/**
 * Long polls hold a request for up to 20 s; keep-alive (65 s) must outlive the proxies in front of
 * us, and the headers' bound is kept above it. The whole request, headers and body, gets the same
 * 66 s: Node refuses a request bound under the headers' (it includes them), and a legitimate body
 * (a publish is at most 240,000 bytes) arrives in a fraction of it. Only receiving the request is
 * timed, never answering it: a long poll's request has no body and is complete with its headers, so
 * its wait is not cut. Node's default checks every 30 s; every second answers a stalled request
 * 408 at its bound rather than up to half a minute after it.
 */
export const REQUEST_TIMEOUTS: RequestTimeouts = { headersMs: 66_000, requestMs: 66_000, checkEveryMs: 1_000 };

export interface ServeOptions {
  host: string;
  port: number;
  logger: Logger;
  /** REQUEST_TIMEOUTS unless given: shorter ones let a test see a 408 without waiting a minute. */
  timeouts?: RequestTimeouts;
}

export async function serve(app: HttpApp, opts: ServeOptions): Promise<RunningServer> {
  const timeouts = opts.timeouts ?? REQUEST_TIMEOUTS;
  const server = createServer(
    {
      // A missing Host is refused by the app (app.ts), in JSON with a request id: Node's own refusal
      // is a bare 400 with no body.
      requireHostHeader: false,
      // Past either bound Node raises ERR_HTTP_REQUEST_TIMEOUT as a clientError: answered 408 below.
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkEveryMs,
    },
    app.express,
  );
  server.keepAliveTimeout = 65_000;
  answerParserErrors(server, app, opts.logger);
  routeConnectRequests(server, app);
  answerExpectations(server, app);
  const drain = closeConnectionsWhenDrained(server);
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
      drain();
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
 * server.close() closes the connections idle at that moment only: a keep-alive connection whose
 * response was in flight would stay open after it, and the drain would wait for its whole timeout.
 * Once draining, every response not yet started says `Connection: close`, and a connection that
 * goes idle is closed at once. Returns the switch that starts the drain.
 */
function closeConnectionsWhenDrained(server: Server): () => void {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once('finish', () => {
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    res.once('close', () => inFlight.delete(res));
  });
  return () => {
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  };
}

/**
 * `Expect: 100-continue`: the request goes through the app like any other, and `100 Continue` is
 * written only when its route reads the body (body.ts), after authentication, limits and the
 * Content-Length check; a refusal before that is the final answer and the body is never sent. Any
 * other expectation is 417 in the app's error shape, and the connection closes.
 */
function answerExpectations(server: Server, app: HttpApp): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    holdContinue(req);
    server.emit('request', req, res);
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const refusal = new ExpectationFailedError();
    const requestId = randomUUID();
    const body = JSON.stringify(app.errorBody(refusal, requestId));
    res.shouldKeepAlive = false;
    res.writeHead(refusal.status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': requestId });
    res.end(body);
  });
}

/** How long a refused connection may stay open for the client to read the answer. */
const REFUSED_LINGER_MS = 2000;

/**
 * Node's own parser refuses some requests before express sees them (CR or NUL in a header,
 * Content-Length with Transfer-Encoding, bad chunked encoding, an unknown method, headers over
 * 16 KB). By default it answers with a bare status and no body; this answers in the app's error
 * shape instead (docs/errors.md), with a request id, and closes the connection: after a parse error
 * nothing more on it can be trusted. As Node does, nothing is written once a response on the
 * connection has started.
 */
function answerParserErrors(server: Server, app: HttpApp, logger: Logger): void {
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    inFlight.set(req.socket, res);
    res.once('close', () => inFlight.delete(req.socket));
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight.get(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = parserRefusal(err);
    const requestId = randomUUID();
    // The parser's error code names what was wrong; the raw bytes of the request are never logged.
    logger.info({ request_id: requestId, status: refusal.status, rule: refusal.rule, parser_error: err.code }, 'request refused by the HTTP parser');
    answerAndClose(socket, app, refusal, requestId);
  });
}

function parserRefusal(err: Error & { code?: string }): HttpError {
  if (err.code === 'HPE_HEADER_OVERFLOW') return new RequestHeadersTooLargeError();
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError();
  // llhttp's messages are fixed texts ("Parse Error: Invalid header value char"), never request data.
  return new MalformedRequestError(err.message.replace(/^Parse Error: /, ''));
}

/** A complete HTTP/1.1 error answer written straight to the socket, for requests express never sees. */
function answerAndClose(socket: Duplex, app: HttpApp, refusal: HttpError, requestId: string): void {
  const body = JSON.stringify(app.errorBody(refusal, requestId));
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    'X-Request-Id': requestId,
    ...refusal.headers,
  };
  const head = [`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * Node hands CONNECT to a separate event and, without a listener, drops the connection without a
 * word. The bus is no proxy: a CONNECT to a path goes through the app like any other method, so it
 * gets what an unserved method gets (405 with Allow on a known path, else 404); a CONNECT to an
 * authority (host:port, the proxy form) names no path of ours: 404 route.not_found. Either way the
 * connection closes afterwards.
 */
function routeConnectRequests(server: Server, app: HttpApp): void {
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    if (!(socket instanceof Socket) || !req.url?.startsWith('/')) {
      answerAndClose(socket, app, new RouteNotFoundError(req.method ?? 'CONNECT', (req.url ?? '').slice(0, 200)), randomUUID());
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', () => {
      res.detachSocket(socket);
      socket.end();
    });
    app.express(req, res);
  });
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
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
