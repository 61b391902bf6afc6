import { connect } from 'node:net';
import { Writable } from 'node:stream';
import type { NextFunction, Request, Response, Router } from 'express';
import { HttpError } from '@bus/contracts';
import { eventually } from '@bus/testing';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { createHttpApp, createRequestMetrics } from './app';
import { readBody } from './body';
import { routeMatcher } from './route-matcher';
import { createRouter } from './router';
import { codeBody, violationBody, type ErrorRenderer } from './error-bodies';
import { REQUEST_TIMEOUTS, serve, type RunningServer } from './server';

/**
 * The edges of every listener (libs/http): requests Node's own parser refuses, and methods a known
 * path does not serve. Driven over raw sockets, since no HTTP client sends such requests.
 */
const logLines: string[] = [];
const logger = createLogger({
  service: 'test',
  level: 'info',
  destination: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }),
});
const metrics = createMetricsRegistry({ defaultMetrics: false });
const requestMetrics = createRequestMetrics(metrics);

function routers(): Router[] {
  const writes = createRouter();
  writes.post('/things', async (req, res) => {
    res.status(201).json({ created: true, bytes: (await readBody(req, 1000)).length });
  });
  // Reads its body only for the right token, as the bus's routes authenticate before the body.
  writes.post(
    '/guarded',
    (req, _res, next) => next(req.headers.authorization === 'Bearer right' ? undefined : new HttpError(401, 'producer.unauthenticated', 'wrong token')),
    async (req, res) => {
      res.status(201).json({ bytes: (await readBody(req, 1000)).length });
    },
  );
  const reads = createRouter();
  reads.get('/things', (_req, res) => {
    res.json({ things: [] });
  });
  reads.get('/things/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  const mounted = createRouter();
  mounted.delete('/:id', (_req, res) => {
    res.status(204).end();
  });
  const outer = createRouter();
  outer.use('/mounted', mounted);
  return [writes, reads, outer];
}

/** Before routing, as the bus host's limits ask whether a request is for a quota route. */
const isThing = routeMatcher([{ method: 'GET', path: '/things/:id' }]);

async function start(renderError: ErrorRenderer): Promise<RunningServer> {
  const middleware = [
    (req: Request, res: Response, next: NextFunction) => {
      res.locals.quotaRoute = isThing(req);
      next();
    },
  ];
  const app = createHttpApp({ name: 'test', logger, metrics, requestMetrics, readiness: [], renderError, middleware, routers: routers() });
  return serve(app, { host: '127.0.0.1', port: 0, logger });
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Writes `request` as is and reads until the server closes the connection (or 5 s pass). */
async function rawRequest(server: RunningServer, request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    // A bound on a silent server (the socket's idle timeout), not a wait: the test reads until close.
    // eslint-disable-next-line no-restricted-syntax
    socket.setTimeout(5000, () => socket.destroy());
  });
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const bodyText = text.slice(split + 4);
  return { status: Number(statusLine.split(' ')[1]), headers, body: bodyText === '' ? undefined : (JSON.parse(bodyText) as unknown) };
}

let bus: RunningServer;
let portal: RunningServer;
beforeAll(async () => {
  bus = await start(violationBody);
  portal = await start(codeBody);
});
afterAll(async () => {
  await bus.close(1000);
  await portal.close(1000);
});

describe("requests Node's HTTP parser refuses (clientError)", () => {
  it.each([
    ['a CR inside a header value', 'GET /things HTTP/1.1\r\nHost: x\r\nX-Note: a\rb\r\n\r\n'],
    ['a NUL inside a header value', 'GET /things HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n'],
    ['Content-Length together with Transfer-Encoding', 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a chunk size that is not hexadecimal', 'POST /things HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n'],
    ['a method Node does not know', 'TRACK /things HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
  ])('answers %s with 400 request.malformed as JSON and closes', async (_what, request) => {
    const answer = await rawRequest(bus, request);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'request.malformed', message: expect.stringMatching(/^The request is not well-formed HTTP\/1\.1: /) }],
    });
  });

  it('answers headers over 16 KB with 431 request.headers_too_large', async () => {
    const answer = await rawRequest(bus, `GET /things HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({ accepted: false, violations: [{ source: 'policy', rule: 'request.headers_too_large', message: expect.any(String) }] });
  });

  it('answers in the portal shape on a portal listener, with the request id it sends', async () => {
    const answer = await rawRequest(portal, 'GET /things HTTP/1.1\r\nHost: x\r\nX-Note: a\rb\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ code: 'request.malformed', message: expect.any(String), request_id: answer.headers['x-request-id'] });
  });

  it("logs the parser's error code, never the request's bytes", async () => {
    await rawRequest(bus, 'GET /things HTTP/1.1\r\nHost: x\r\nX-Secret: marker-7781\rb\r\n\r\n');
    const line = logLines.find((l) => l.includes('request refused by the HTTP parser') && l.includes('HPE_'));
    expect(line).toBeDefined();
    expect(logLines.join('')).not.toContain('marker-7781');
    // A body whose framing broke is the client's fault: never an "unhandled error" 500 in the log.
    expect(logLines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });

  it('leaves a well-formed request on the same listener alone', async () => {
    const answer = await rawRequest(bus, 'GET /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([answer.status, answer.body]).toEqual([200, { things: [] }]);
  });
});

describe('methods a known path does not serve', () => {
  it('answers 405 method.not_allowed with Allow listing what the path serves, across routers', async () => {
    const res = await fetch(`${bus.url}/things`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await res.json()).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'method.not_allowed', message: '/things does not serve PUT; it serves GET, HEAD, POST' }],
    });
  });

  it('answers TRACE and QUERY on a known path 405, not 403 or 404', async () => {
    for (const method of ['TRACE', 'QUERY']) {
      const answer = await rawRequest(bus, `${method} /things/42 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect({ method, status: answer.status, allow: answer.headers.allow }).toEqual({ method, status: 405, allow: 'GET, HEAD' });
    }
  });

  it('answers CONNECT like any other method instead of dropping the connection', async () => {
    const known = await rawRequest(bus, 'CONNECT /things HTTP/1.1\r\nHost: x\r\n\r\n');
    expect([known.status, known.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
    const authority = await rawRequest(bus, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(authority.status).toBe(404);
  });

  it('finds the methods of a router mounted under a prefix', async () => {
    const res = await fetch(`${bus.url}/mounted/7`, { method: 'GET' });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'DELETE']);
  });

  it('answers the portal shape on a portal listener', async () => {
    const res = await fetch(`${portal.url}/things`, { method: 'DELETE', headers: { 'X-Request-Id': 'req-405' } });
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({
      code: 'method.not_allowed',
      message: '/things does not serve DELETE; it serves GET, HEAD, POST',
      request_id: 'req-405',
    });
  });

  it('keeps HEAD where GET is, and 404 route.not_found for a path nothing serves', async () => {
    expect((await fetch(`${bus.url}/things`, { method: 'HEAD' })).status).toBe(200);
    const res = await fetch(`${bus.url}/nothing-here`, { method: 'PUT' });
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
  });
});

/** Writes `head`, collects what the server answers within the first answer, then (if given) writes `rest`. */
async function conversation(server: RunningServer, head: string, rest?: string): Promise<{ first: string; all: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    let all = '';
    let first: string | undefined;
    const socket = connect(Number(port), hostname, () => socket.write(head));
    socket.on('data', (d: Buffer) => {
      all += d.toString('utf8');
      if (first === undefined && all.includes('\r\n\r\n')) {
        first = all;
        if (rest !== undefined) socket.write(rest);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ first: first ?? all, all }));
    // A bound on a silent server (the socket's idle timeout), not a wait: the test reads until close.
    // eslint-disable-next-line no-restricted-syntax
    socket.setTimeout(5000, () => socket.destroy());
  });
}

describe('Expect', () => {
  it('writes 100 Continue only once the route reads the body, after its checks', async () => {
    const ok = await conversation(
      bus,
      'POST /guarded HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer right\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
      'hello',
    );
    expect(ok.first).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
    expect(ok.all).toMatch(/HTTP\/1\.1 201 Created/);
  });

  it('answers a refused request at once with its final status, never 100 Continue', async () => {
    const refused = await conversation(
      bus,
      'POST /guarded HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n',
    );
    expect(refused.first).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused.all).not.toContain('100 Continue');
    const tooLarge = await conversation(bus, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n');
    expect(tooLarge.first).toMatch(/^HTTP\/1\.1 413 /);
    expect(tooLarge.all).not.toContain('100 Continue');
  });

  it.each([
    ['bus', () => bus, { accepted: false, violations: [{ source: 'policy', rule: 'request.expectation_failed', message: expect.any(String) }] }],
    ['portal', () => portal, { code: 'request.expectation_failed', message: expect.any(String), request_id: expect.any(String) }],
  ])('answers any other expectation 417 with a JSON body and a request id (%s)', async (_host, server, body) => {
    const answer = await rawRequest(server(), 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: teapot\r\n\r\nhello');
    expect(answer.status).toBe(417);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual(body);
  });
});

describe('requests no route could read as meant', () => {
  it.each(['gzip', 'deflate', 'br', 'gzip, identity'])('answers Content-Encoding: %s 415 request.content_encoding_unsupported', async (encoding) => {
    const res = await fetch(`${bus.url}/things`, { method: 'POST', headers: { 'Content-Encoding': encoding }, body: '{}' });
    expect(res.status).toBe(415);
    expect(res.headers.get('accept-encoding')).toBe('identity');
    expect(await res.json()).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'request.content_encoding_unsupported', message: expect.any(String) }],
    });
  });

  it('takes Content-Encoding: identity as no encoding', async () => {
    const res = await fetch(`${bus.url}/things`, { method: 'POST', headers: { 'Content-Encoding': 'identity' }, body: '{}' });
    expect(res.status).toBe(201);
  });

  it.each([
    ['bus', () => bus, { accepted: false, violations: [{ source: 'policy', rule: 'request.malformed', message: expect.stringContaining('Host header') }] }],
    ['portal', () => portal, { code: 'request.malformed', message: expect.stringContaining('Host header'), request_id: expect.any(String) }],
  ])('answers an HTTP/1.1 request without Host 400 request.malformed as JSON with a request id, and closes (%s)', async (_host, server, body) => {
    // No Connection: close: the server closes it.
    const answer = await rawRequest(server(), 'GET /things HTTP/1.1\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual(body);
  });

  it('answers two Host headers 400 request.malformed, and takes HTTP/1.0 without Host', async () => {
    const twice = await rawRequest(bus, 'GET /things HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n');
    expect([twice.status, twice.headers.connection]).toEqual([400, 'close']);
    expect(twice.body).toMatchObject({ violations: [{ rule: 'request.malformed', message: expect.stringContaining('2 Host headers') }] });
    const old = await rawRequest(bus, 'GET /things HTTP/1.0\r\n\r\n');
    expect([old.status, old.body]).toEqual([200, { things: [] }]);
  });

  const chunked = (codings: string) =>
    `POST /things HTTP/1.1\r\nHost: x\r\n${codings
      .split('|')
      .map((c) => `Transfer-Encoding: ${c}\r\n`)
      .join('')}\r\n2\r\n{}\r\n0\r\n\r\n`;

  it.each(['gzip, chunked', 'x-unknown, chunked', 'deflate,chunked', 'identity, chunked', 'chunked|chunked', 'gzip|chunked'])(
    'answers Transfer-Encoding: %s 400 request.malformed before the route reads the body',
    async (codings) => {
      const answer = await rawRequest(bus, chunked(codings));
      expect([answer.status, answer.headers.connection]).toEqual([400, 'close']);
      expect(answer.body).toEqual({
        accepted: false,
        violations: [{ source: 'policy', rule: 'request.malformed', message: expect.stringContaining('Transfer-Encoding') }],
      });
    },
  );

  it.each(['chunked', 'Chunked', 'CHUNKED'])('reads a body under Transfer-Encoding: %s', async (coding) => {
    const answer = await rawRequest(bus, chunked(coding).replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n'));
    expect([answer.status, answer.body]).toEqual([201, { created: true, bytes: 2 }]);
  });

  it('answers two Authorization headers 400 request.malformed', async () => {
    const answer = await rawRequest(bus, 'GET /things HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'request.malformed', message: expect.stringContaining('2 Authorization headers') }],
    });
  });
});

describe('paths match exactly as documented', () => {
  it.each(['/things/', '/THINGS', '/Things/42', '/things/42/', '/MOUNTED/7'])('answers %s 404 route.not_found with a JSON body', async (path) => {
    const res = await fetch(`${bus.url}${path}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ accepted: false, violations: [{ source: 'policy', rule: 'route.not_found', message: expect.any(String) }] });
  });
});

describe('request targets that do not decode', () => {
  const targets = ['/things/%ZZ', '/things/%ff%fe', '/things/%C0%AF', '/things/%E0%A4%A', '/mounted/%', '/things?limit=%ZZ', '/things?q=%ED%A0%80'];
  const cases = targets.flatMap((target) => ['GET', 'DELETE', 'OPTIONS', 'POST'].map((method) => [method, target] as const));

  it.each(cases)('answers %s %s 400 request.malformed as JSON, never 500', async (method, target) => {
    const answer = await rawRequest(bus, `${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'request.malformed', message: expect.stringContaining('malformed percent escape') }],
    });
  });

  it('answers HEAD the same status, and the portal shape on a portal listener', async () => {
    const head = await rawRequest(bus, 'HEAD /things/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([head.status, head.headers['x-request-id']]).toEqual([400, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    const answer = await rawRequest(portal, 'GET /things/%ff%fe HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-escape\r\nConnection: close\r\n\r\n');
    expect([answer.status, answer.body]).toEqual([400, { code: 'request.malformed', message: expect.any(String), request_id: 'req-escape' }]);
  });

  it('lets well-formed escapes through to the route, and logs the refusal without an error', async () => {
    const res = await fetch(`${bus.url}/things/caf%C3%A9%2F1`);
    expect([res.status, await res.json()]).toEqual([200, { id: 'café/1' }]);
    const before = logLines.length;
    await rawRequest(bus, 'GET /things/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const lines = logLines.slice(before);
    expect(lines.some((l) => l.includes('"status":400'))).toBe(true);
    expect(lines.filter((l) => !l.includes('"level":"info"'))).toEqual([]);
    expect(lines.join('')).not.toContain('stack');
  });
});

describe('requests that do not arrive in time', () => {
  let slow: RunningServer;
  let entered = false;
  let release = () => undefined as void;
  const held = new Promise<void>((resolve) => (release = resolve));
  beforeAll(async () => {
    const router = createRouter();
    router.post('/things', async (req, res) => {
      res.status(201).json({ bytes: (await readBody(req, 1000)).length });
    });
    // Answers only when the test says so, as a long poll answers when a message comes.
    router.get('/held', async (_req, res) => {
      entered = true;
      await held;
      res.json({ held: true });
    });
    const app = createHttpApp({ name: 'test', logger, metrics, requestMetrics, readiness: [], renderError: violationBody, routers: [router] });
    slow = await serve(app, { host: '127.0.0.1', port: 0, logger, timeouts: { headersMs: 200, requestMs: 300, checkEveryMs: 20 } });
  });
  afterAll(() => slow.close(1000));

  const timedOut = {
    accepted: false,
    violations: [{ source: 'policy', rule: 'request.timeout', message: 'The request was not received in full in time' }],
  };

  it.each([
    ['a body that stops short of its Content-Length', 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab'],
    ['headers that never end', 'GET /things HTTP/1.1\r\nHost: x\r\n'],
  ])('answers %s 408 request.timeout as JSON and closes', async (_what, request) => {
    const answer = await rawRequest(slow, request);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual(timedOut);
  });

  it('never cuts a request whose answer takes long: only receiving the request is timed', async () => {
    const waiting = rawRequest(slow, 'GET /held HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await eventually(
      () => entered,
      (inRoute) => inRoute,
      { what: 'the held request in its route' },
    );
    // Sent after the held one and timed out: the held one has been in flight longer than the bound.
    expect((await rawRequest(slow, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab')).status).toBe(408);
    release();
    expect(await waiting).toMatchObject({ status: 200, body: { held: true } });
  });

  it('gives every listener the documented bounds: 66 s for the headers and for the whole request', () => {
    expect(REQUEST_TIMEOUTS).toEqual({ headersMs: 66_000, requestMs: 66_000, checkEveryMs: 1_000 });
    expect([bus.server.headersTimeout, bus.server.requestTimeout]).toEqual([66_000, 66_000]);
  });
});
