import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document the checker reads. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation | unknown>>;
  components?: unknown;
}

interface OpenApiOperation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { required?: boolean }> }>;
}

export interface ObservedResponse {
  status: number;
  headers: Headers | Record<string, string | undefined>;
  /** Parsed JSON, or text for non-JSON media types; undefined when there was no body. */
  body: unknown;
}

export interface OpenApiChecker {
  /** Throws an error naming the operation and what does not match; returns when the response conforms. */
  check(method: string, url: string, response: ObservedResponse): void;
  /** Throws unless `value` matches #/components/schemas/`name`: one item of a streamed answer (an NDJSON line). */
  checkSchema(name: string, value: unknown): void;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const DOC_ID = 'https://openapi.invalid/document.json';

/**
 * Checks responses a test received against the OpenAPI 3.1 document the service publishes: the route
 * and method exist, the status is documented, required headers are present, the media type is one
 * the document names and the body matches its schema (JSON Schema 2020-12, as OpenAPI 3.1 uses).
 */
export function createOpenApiChecker(document: OpenApiDocument): OpenApiChecker {
  if (!/^3\.1\./.test(document.openapi)) throw new Error(`expected an OpenAPI 3.1 document, got ${document.openapi}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: DOC_ID });
  const routes = Object.keys(document.paths).map((template) => ({ template, pattern: templatePattern(template) }));

  return {
    checkSchema(name, value) {
      const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${escapePointer(name)}`);
      if (!validate) throw new Error(`#/components/schemas/${name}: no such schema`);
      if (!validate(value)) throw new Error(`${name}: ${ajv.errorsText(validate.errors)}\nvalue: ${JSON.stringify(value)}`);
    },
    check(method, url, response) {
      const path = new URL(url, 'http://host').pathname;
      const route = routes.find((r) => r.pattern.test(path));
      if (!route) throw new Error(`${method} ${path}: no path of the OpenAPI document matches`);
      const verb = method.toLowerCase();
      const operation = document.paths[route.template]?.[verb] as OpenApiOperation | undefined;
      if (!METHODS.has(verb) || !operation) throw new Error(`${method} ${route.template}: method not in the OpenAPI document`);
      const where = `${method} ${route.template} → ${response.status}`;
      const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => k in operation.responses);
      if (!statusKey) throw new Error(`${where}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
      const documented = operation.responses[statusKey] ?? {};

      for (const [name, header] of Object.entries(documented.headers ?? {})) {
        if (header.required && headerOf(response.headers, name) === undefined) throw new Error(`${where}: required header ${name} missing`);
      }
      const content = documented.content;
      if (!content) {
        if (response.body !== undefined && response.body !== '') throw new Error(`${where}: a body was sent but none is documented`);
        return;
      }
      const mediaType = (headerOf(response.headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!(mediaType in content)) throw new Error(`${where}: content type "${mediaType}" not documented (${Object.keys(content).join(', ')})`);
      if (content[mediaType]?.schema === undefined) return;
      const pointer = ['paths', route.template, verb, 'responses', statusKey, 'content', mediaType, 'schema'].map(escapePointer).join('/');
      const validate = ajv.getSchema(`${DOC_ID}#/${pointer}`);
      if (!validate) throw new Error(`${where}: schema could not be compiled`);
      if (!validate(response.body)) {
        const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
        throw new Error(`${where}: body does not match the documented schema: ${problems}\nbody: ${JSON.stringify(response.body)}`);
      }
    },
  };
}

/** Fetches `url` and returns the response with its body read as JSON (or text), for checking. */
export async function fetchObserved(url: string, init?: RequestInit): Promise<ObservedResponse & { headers: Headers; raw: Response }> {
  const raw = await fetch(url, init);
  const text = await raw.text();
  const isJson = /json/.test(raw.headers.get('content-type') ?? '');
  return { raw, status: raw.status, headers: raw.headers, body: text === '' ? undefined : isJson ? JSON.parse(text) : text };
}

function templatePattern(template: string): RegExp {
  const escaped = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^/]+')}$`);
}

function escapePointer(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}

function headerOf(headers: ObservedResponse['headers'], name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}
