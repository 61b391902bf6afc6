import { createOpenApiChecker, type OpenApiDocument } from './openapi';

const json = { 'content-type': 'application/json; charset=utf-8' };
const document: OpenApiDocument = {
  openapi: '3.1.0',
  paths: {
    '/v1/tenants/{t}/things/{id}': {
      get: {
        responses: {
          '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } },
          '4XX': { content: { 'application/json': { schema: { type: 'object', required: ['code'] } } } },
          '204': {},
          '429': { headers: { 'Retry-After': { required: true } }, content: { 'application/json': {} } },
        },
      },
    },
  },
  components: {
    schemas: { Thing: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string' } } } },
  },
};
const checker = createOpenApiChecker(document);
const url = 'http://127.0.0.1:1/v1/tenants/w1/things/42?x=1';

describe('createOpenApiChecker', () => {
  it('accepts a response that matches the operation, status and schema (with $ref)', () => {
    expect(() => checker.check('GET', url, { status: 200, headers: json, body: { id: '42' } })).not.toThrow();
    expect(() => checker.check('GET', url, { status: 404, headers: json, body: { code: 'x' } })).not.toThrow();
    expect(() => checker.check('GET', url, { status: 204, headers: {}, body: undefined })).not.toThrow();
  });

  it.each([
    ['an unknown path', 'GET', 'http://h/v1/other', { status: 200, headers: json, body: { id: '1' } }, /no path of the OpenAPI document matches/],
    ['an undocumented method', 'POST', url, { status: 200, headers: json, body: { id: '1' } }, /method not in the OpenAPI document/],
    ['an undocumented status', 'GET', url, { status: 500, headers: json, body: {} }, /status not documented/],
    ['a body that breaks the schema', 'GET', url, { status: 200, headers: json, body: { id: 42, extra: true } }, /does not match the documented schema/],
    [
      'an undocumented media type',
      'GET',
      url,
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>' },
      /content type "text\/html" not documented/,
    ],
    ['a body where none is documented', 'GET', url, { status: 204, headers: json, body: { id: '1' } }, /none is documented/],
    ['a missing required header', 'GET', url, { status: 429, headers: json, body: {} }, /required header Retry-After missing/],
  ])('refuses %s', (_what, method, target, response, message) => {
    expect(() => checker.check(method, target, response)).toThrow(message);
  });

  it('checks one item of a streamed answer against a component schema', () => {
    expect(() => checker.checkSchema('Thing', { id: '1' })).not.toThrow();
    expect(() => checker.checkSchema('Thing', { id: 1 })).toThrow(/Thing: .*must be string/);
    expect(() => checker.checkSchema('Nothing', {})).toThrow(/no such schema/);
  });

  it('refuses a document that is not OpenAPI 3.1', () => {
    expect(() => createOpenApiChecker({ ...document, openapi: '3.0.3' })).toThrow(/OpenAPI 3.1/);
  });
});
