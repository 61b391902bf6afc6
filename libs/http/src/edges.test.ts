import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { Router } from 'express';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { createHttpApp, createRequestMetrics } from './app';
import { readBody } from './body';
import { codeBody, violationBody, type ErrorRenderer } from './error-bodies';
import { serve, type RunningServer } from './server';

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
  const writes = Router();
  writes.post('/things', async (req, res) => {
    res.status(201).json({ created: true, bytes: (await readBody(req, 1000)).length });
  });
  const reads = Router();
  reads.get('/things', (_req, res) => {
    res.json({ things: [] });
  });
  reads.get('/things/:id', (req, res) => {
    res.json({ id: req.params.id });
  });
  const mounted = Router();
  mounted.delete('/:id', (_req, res) => {
    res.status(204).end();
  });
  const outer = Router();
  outer.use('/mounted', mounted);
  return [writes, reads, outer];
}

async function start(renderError: ErrorRenderer): Promise<RunningServer> {
  const app = createHttpApp({ name: 'test', logger, metrics, requestMetrics, readiness: [], renderError, routers: routers() });
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
