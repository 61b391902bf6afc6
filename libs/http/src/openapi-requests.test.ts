import { Writable } from 'node:stream';
import { Router } from 'express';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { createHttpApp, createRequestMetrics } from './app';
import { codeBody } from './error-bodies';
import { HttpError } from './errors';
import { compileOpenApiRequests, requestValidation, validatedQuery, type RequestValidationOptions } from './openapi-requests';
import { serve, type RunningServer } from './server';

/** A small document with what the mechanism reads: path-item and operation parameters, a oneOf body. */
const document = {
  openapi: '3.1.0',
  paths: {
    '/things/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^t[0-9]{3}$' } }],
      get: {
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 10, default: 5 } },
          { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
          { name: 'word', in: 'query', schema: { type: 'string', pattern: '^[a-z]+$', 'x-pattern-message': 'must be lowercase letters' } },
        ],
        responses: {},
      },
      put: {
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
        responses: {},
      },
    },
    '/things/special': { get: { responses: {} } },
  },
  components: {
    schemas: {
      Thing: {
        oneOf: [
          { type: 'object', additionalProperties: false, required: ['kind'], properties: { kind: { const: 'plain' } } },
          {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'size'],
            properties: { kind: { const: 'sized' }, size: { type: 'integer', maximum: 9 }, at: { type: 'string', format: 'date-time' } },
          },
        ],
      },
    },
  },
};

describe('compileOpenApiRequests (pure)', () => {
  const requests = compileOpenApiRequests(document);
  const parameters = (path: string, query = '') => {
    const found = requests.operation('GET', path);
    if (!found) throw new Error('no operation');
    return found.operation.checkParameters(found.pathParams, new URLSearchParams(query));
  };

  it('reads the query into its declared types and fills in defaults', () => {
    expect(parameters('/things/t001')).toEqual({ ok: true, value: { limit: 5 } });
    expect(parameters('/things/t001', 'limit=10&verbose=true')).toEqual({ ok: true, value: { limit: 10, verbose: true } });
  });

  it.each([
    ['', '/things/nope', 'path parameter "id" must match pattern "^t[0-9]{3}$"'],
    ['limit=11', '/things/t001', 'query parameter "limit" must be <= 10'],
    ['limit=ten', '/things/t001', 'query parameter "limit" must be integer'],
    ['limit=1.5', '/things/t001', 'query parameter "limit" must be integer'],
    ['verbose=yes', '/things/t001', 'query parameter "verbose" must be boolean'],
    ['limit=1&limit=2', '/things/t001', 'query parameter "limit" is given more than once'],
    ['lmit=1', '/things/t001', 'unknown query parameter "lmit"'],
    ['__proto__=1', '/things/t001', 'unknown query parameter "__proto__"'],
    ['limit=2&__proto__[limit]=1', '/things/t001', 'unknown query parameter "__proto__[limit]"'],
    ['constructor=1', '/things/t001', 'unknown query parameter "constructor"'],
    // A pattern the document words (x-pattern-message) is said in those words, never as the pattern.
    ['word=Caps', '/things/t001', 'query parameter "word" must be lowercase letters'],
  ])('refuses ?%s on %s naming the parameter', (query, path, problem) => {
    expect(parameters(path, query)).toEqual({ ok: false, problem });
  });

  it('checks HEAD as the GET operation, the one express answers it with', () => {
    const head = requests.operation('HEAD', '/things/t001');
    expect(head?.operation.method).toBe('GET');
    expect(head?.operation.checkParameters(head.pathParams, new URLSearchParams('limit=11'))).toEqual({
      ok: false,
      problem: 'query parameter "limit" must be <= 10',
    });
  });

  it('prefers the more literal template, and has no operation for a method the path does not document', () => {
    expect(requests.operation('GET', '/things/special')?.operation.template).toBe('/things/special');
    expect(requests.operation('DELETE', '/things/t001')).toBeUndefined();
    expect(requests.operation('GET', '/elsewhere')).toBeUndefined();
  });

  it('checks a JSON body, reporting the oneOf branch the body comes closest to', () => {
    const put = requests.operation('PUT', '/things/t001')?.operation;
    if (!put) throw new Error('no operation');
    expect(put.checkJsonBody({ kind: 'plain' })).toEqual({ ok: true, value: { kind: 'plain' } });
    expect(put.checkJsonBody({ kind: 'sized', size: 10 })).toEqual({ ok: false, problem: 'body "size" must be <= 9' });
    expect(put.checkJsonBody({ kind: 'sized', size: 1, at: '2026-02-30T00:00:00Z' })).toEqual({
      ok: false,
      problem: 'body "at" must match format "date-time"',
    });
    expect(put.checkJsonBody(undefined)).toEqual({ ok: false, problem: 'the body is required: a JSON value as the document describes' });
  });

  it('refuses at start-up a parameter it could not check', () => {
    const withRef = { openapi: '3.1.0', paths: { '/x': { get: { parameters: [{ $ref: '#/components/parameters/P' }], responses: {} } } } };
    expect(() => compileOpenApiRequests(withRef)).toThrow(/unsupported parameter/);
  });
});

class InvalidThingError extends HttpError {
  constructor(problem: string) {
    super(400, 'thing.invalid', problem);
  }
}

/** The document's routes on a server of their own, validated with `options`. */
async function thingsServer(options: RequestValidationOptions = {}): Promise<RunningServer> {
  const logger = createLogger({ service: 'test', level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const validation = requestValidation(document, (problem) => new InvalidThingError(problem), options);
  const router = Router();
  router.use('/things', validation.parameters);
  router.get('/things/:id', (req, res) => {
    res.json({ query: validatedQuery(req) });
  });
  router.put('/things/:id', async (req, res) => {
    res.json({ body: await validation.jsonBody(req, 1000) });
  });
  const app = createHttpApp({
    name: 'test',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: codeBody,
    routers: [router],
  });
  return serve(app, { host: '127.0.0.1', port: 0, logger });
}

describe('requestValidation on a route', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await thingsServer();
  });
  afterAll(() => server.close(1000));

  it('hands the route the checked query and body', async () => {
    expect(await (await fetch(`${server.url}/things/t001?verbose=false`)).json()).toEqual({ query: { limit: 5, verbose: false } });
    const put = await fetch(`${server.url}/things/t001`, { method: 'PUT', body: '{"kind":"plain"}' });
    expect(await put.json()).toEqual({ body: { kind: 'plain' } });
  });

  it("answers the route's own 400 naming the field, for parameters and bodies", async () => {
    const bad = await fetch(`${server.url}/things/t001?limit=0`);
    expect([bad.status, ((await bad.json()) as { code: string; message: string }).message]).toEqual([400, 'query parameter "limit" must be >= 1']);
    const notJson = await fetch(`${server.url}/things/t001`, { method: 'PUT', body: '{"kind":' });
    expect(await notJson.json()).toMatchObject({ code: 'thing.invalid', message: expect.stringMatching(/^The body is not JSON: /) });
  });

  it('reads a body as the gateway reads a message (I-JSON): a duplicate member name, a BOM or a lone surrogate is a 400', async () => {
    const cases = [
      ['{"kind":"plain","kind":"fancy"}', /^The member name "kind" appears twice in one object.* \(at \/kind\)$/],
      ['\ufeff{"kind":"plain"}', /byte order mark/],
      ['{"kind":"\\ud800"}', /lone surrogate .* \(at \/kind\)$/],
    ] as const;
    for (const [body, message] of cases) {
      const res = await fetch(`${server.url}/things/t001`, { method: 'PUT', body });
      expect([res.status, await res.json()]).toEqual([400, expect.objectContaining({ code: 'thing.invalid', message: expect.stringMatching(message) })]);
    }
  });

  it('validates HEAD as GET: the route reads the checked query, a bad parameter is the same 400', async () => {
    const head = await fetch(`${server.url}/things/t001?verbose=false`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    const bad = await fetch(`${server.url}/things/t001?limit=0`, { method: 'HEAD' });
    expect(bad.status).toBe(400);
  });

  it('leaves what the document does not describe to routing', async () => {
    expect((await fetch(`${server.url}/things/t001`, { method: 'DELETE' })).status).toBe(405);
  });
});

describe('requestValidation with requireJsonMediaType (routes with ambient credentials)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await thingsServer({ requireJsonMediaType: true });
  });
  afterAll(() => server.close(1000));

  it('reads a body sent as application/json (UTF-8) only: a form can post no JSON as text/plain', async () => {
    const put = (contentType: string | undefined) =>
      fetch(`${server.url}/things/t001`, { method: 'PUT', body: Buffer.from('{"kind":"plain"}'), headers: contentType ? { 'Content-Type': contentType } : {} });
    for (const accepted of ['application/json', 'Application/JSON; charset=UTF-8', 'application/json;charset="utf-8"']) {
      const res = await put(accepted);
      expect({ accepted, status: res.status, body: await res.json() }).toEqual({ accepted, status: 200, body: { body: { kind: 'plain' } } });
    }
    for (const refused of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      'application/jsonx',
    ]) {
      const res = await put(refused);
      expect({ refused, status: res.status, body: await res.json() }).toEqual({
        refused,
        status: 400,
        body: expect.objectContaining({ code: 'thing.invalid', message: 'the body must be sent as Content-Type: application/json (UTF-8)' }),
      });
    }
  });
});
