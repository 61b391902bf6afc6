import { Writable } from 'node:stream';
import { request } from 'node:http';
import { Router } from 'express';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { codeBody, violationBody, type ErrorRenderer } from './error-bodies';
import { DependencyUnavailableError, HttpError, OAuthError, unavailableUnlessDone } from './errors';
import { readBody } from './body';
import { cacheableJson, sendCacheable } from './cacheable';
import { createHttpApp, createRequestMetrics } from './app';
import { serve, type RunningServer } from './server';
import type { ReadinessCheck } from './readiness';

const LIMIT = 1000;
const logLines: string[] = [];
const logger = createLogger({
  service: 'test',
  level: 'info',
  destination: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }),
});

let postgresUp = true;
let redisUp = true;
const readiness: ReadinessCheck[] = [
  {
    name: 'postgres',
    check: async () => {
      if (!postgresUp) throw new Error('connection refused');
    },
  },
  {
    name: 'redis',
    optional: true,
    check: async () => {
      if (!redisUp) throw new Error('connection refused');
    },
  },
];

function router(): Router {
  const r = Router();
  r.post('/echo', async (req, res) => {
    const body = await readBody(req, LIMIT);
    res.json({ bytes: body.length });
  });
  r.get('/plain', (_req, res) => {
    res.json({ plain: true });
  });
  const document = cacheableJson({ document: 'the same every time' });
  r.get('/document', (req, res) => {
    sendCacheable(req, res, document, 'public, max-age=300');
  });
  r.get('/refuse', () => {
    throw new HttpError(429, 'rate.limited', 'Too many requests', 'policy', { 'Retry-After': '3' });
  });
  r.post('/token', () => {
    throw new OAuthError(401, 'invalid_client', 'Client authentication failed', { 'WWW-Authenticate': 'Basic realm="bus"' });
  });
  r.get('/crash', () => {
    throw new Error('secret internal detail');
  });
  r.get('/dependency', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await unavailableUnlessDone(
      () => Promise.reject(refused),
      (cause) => new DependencyUnavailableError('registry.unavailable', 'The registry could not be read', cause),
    );
  });
  return r;
}

const metrics = createMetricsRegistry({ defaultMetrics: false });
const requestMetrics = createRequestMetrics(metrics);

async function start(renderError: ErrorRenderer): Promise<RunningServer> {
  const app = createHttpApp({
    name: 'test',
    logger,
    metrics,
    requestMetrics,
    readiness,
    renderError,
    routers: [router()],
  });
  return serve(app, { host: '127.0.0.1', port: 0, logger });
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

describe('operational routes', () => {
  it('answers /healthz', async () => {
    const res = await fetch(`${bus.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('reports every readiness check and turns 503 when a required one fails', async () => {
    let res = await fetch(`${bus.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ready: true, checks: { postgres: 'ok', redis: 'ok' } });
    postgresUp = false;
    try {
      res = await fetch(`${bus.url}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ready: false, checks: { postgres: 'connection refused', redis: 'ok' } });
    } finally {
      postgresUp = true;
    }
  });

  it('stays ready without an optional dependency and says it is degraded', async () => {
    redisUp = false;
    try {
      const res = await fetch(`${bus.url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ready: true, checks: { postgres: 'ok', redis: 'degraded: connection refused' } });
    } finally {
      redisUp = true;
    }
  });

  it('exposes request metrics by route pattern in the Prometheus text format', async () => {
    await fetch(`${bus.url}/healthz`);
    const res = await fetch(`${bus.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toMatch(/http_requests_total\{app="test",method="GET",route="\/healthz",status="200"\} \d+/);
  });
});

describe('errors', () => {
  it('answers an unknown route 404 in the bus shape', async () => {
    const res = await fetch(`${bus.url}/v1/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'route.not_found', message: 'No route for GET /v1/nope' }],
    });
  });

  it('carries the headers of an error, such as Retry-After', async () => {
    const res = await fetch(`${bus.url}/refuse`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
  });

  it('renders the portal code shape with the request id', async () => {
    const res = await fetch(`${portal.url}/api/nope`, { headers: { 'X-Request-Id': 'req-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('req-123');
    expect(await res.json()).toEqual({ code: 'route.not_found', message: 'No route for GET /api/nope', request_id: 'req-123' });
  });

  it('renders a token-route error as an RFC 6749 body on either host', async () => {
    for (const server of [bus, portal]) {
      const res = await fetch(`${server.url}/token`, { method: 'POST' });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="bus"');
      expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
    }
  });

  it('hides an unexpected error behind 500 internal.error and logs it', async () => {
    const res = await fetch(`${bus.url}/crash`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { violations: Array<{ rule: string; message: string }> };
    expect(body.violations[0]?.rule).toBe('internal.error');
    expect(JSON.stringify(body)).not.toContain('secret internal detail');
    expect(logLines.some((l) => l.includes('secret internal detail') && l.includes('"level":"error"'))).toBe(true);
  });

  it("answers a dependency's failure 503 with Retry-After and logs it once, its cause included", async () => {
    const res = await fetch(`${bus.url}/dependency`, { headers: { 'X-Request-Id': 'dependency-cause-1' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toEqual({
      accepted: false,
      violations: [{ source: 'policy', rule: 'registry.unavailable', message: 'The registry could not be read' }],
    });
    const logged = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.request_id === 'dependency-cause-1' && l.level === 'warn');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      msg: 'dependency unavailable',
      err: {
        type: 'DependencyUnavailableError',
        message: 'The registry could not be read',
        cause: { message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' },
      },
    });
  });
});

describe('ETags', () => {
  it('puts none on an ordinary JSON answer or an error', async () => {
    for (const res of [await fetch(`${bus.url}/plain`), await fetch(`${bus.url}/refuse`), await fetch(`${bus.url}/echo`, { method: 'POST', body: 'x' })]) {
      expect(res.headers.get('etag')).toBeNull();
    }
  });

  it('tags a cacheable document strongly and answers 304 to If-None-Match naming it, 200 otherwise', async () => {
    const first = await fetch(`${bus.url}/document`);
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await first.json()).toEqual({ document: 'the same every time' });
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await fetch(`${bus.url}/document`, { headers: { 'If-None-Match': ifNoneMatch } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(await again.text()).toBe('');
    }
    const changed = await fetch(`${bus.url}/document`, { headers: { 'If-None-Match': '"an-older-answer"' } });
    expect(changed.status).toBe(200);
  });
});

describe('request ids', () => {
  it('generates one when the caller sends none or an unusable one', async () => {
    const a = await fetch(`${bus.url}/healthz`);
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await fetch(`${bus.url}/healthz`, { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('body size limit', () => {
  it('reads a body at the limit', async () => {
    const res = await fetch(`${bus.url}/echo`, { method: 'POST', body: 'x'.repeat(LIMIT) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: LIMIT });
  });

  it('refuses a declared Content-Length over the limit with 413 before the body is sent', async () => {
    // The client declares LIMIT + 1 bytes but sends nothing: an answer proves nothing was waited for.
    const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${bus.url}/echo`, { method: 'POST', headers: { 'Content-Length': String(LIMIT + 1) } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer.status).toBe(413);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({
      accepted: false,
      violations: [{ source: 'conformance', rule: 'message.too_large', message: `The body is over ${LIMIT} bytes` }],
    });
  });

  it('cuts a chunked body at the first byte over the limit', async () => {
    const answer = await new Promise<number>((resolve, reject) => {
      const req = request(`${bus.url}/echo`, { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('x'.repeat(LIMIT));
      req.write('y');
      // Never end the request: the server must answer without waiting for the rest.
    });
    expect(answer).toBe(413);
  });
});

describe('logging', () => {
  it('logs method, route and status but never headers or bodies', async () => {
    await fetch(`${bus.url}/echo`, {
      method: 'POST',
      headers: { Authorization: 'Bearer token-marker-123' },
      body: 'body-marker-456',
    });
    const joined = logLines.join('');
    expect(joined).toContain('"route":"/echo"');
    expect(joined).not.toContain('token-marker-123');
    expect(joined).not.toContain('body-marker-456');
  });
});
