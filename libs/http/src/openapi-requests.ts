import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ErrorObject } from 'ajv';
// ajv/dist/2020 is ajv's documented entry point for draft 2020-12, the dialect of OpenAPI 3.1.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ijsonProblemText, parseIJson } from '@bus/contracts';
import { readBody } from './body';
import type { HttpError } from './errors';

/**
 * Requests validated from the OpenAPI document a service serves, so the document and the code cannot
 * drift: per operation, the path parameters, the query parameters (any the operation does not list is
 * refused) and a JSON body are checked against the operation's own schemas. Everything is compiled
 * once, at start-up; an operation added to the document is validated without a line of code.
 * What a schema cannot say (a rule across two fields, the clock, the state of a resource) stays in
 * the route, after this.
 */

/** The parts of an OpenAPI 3.1 document read here. */
export interface OpenApiRequestDocument {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export type CheckResult<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface CompiledOperation {
  /** The path template of the document, e.g. /api/admin/connections/{c}. */
  readonly template: string;
  readonly method: string;
  /** Whether the operation takes an application/json body. */
  readonly takesJson: boolean;
  /**
   * Checks the path parameters (decoded values by name) and the raw query string; the query comes
   * back read into the schemas' types, with their defaults filled in.
   */
  checkParameters(pathParams: Readonly<Record<string, string>>, query: URLSearchParams): CheckResult<Record<string, unknown>>;
  /** Checks a parsed JSON body (undefined: no body was sent). */
  checkJsonBody(body: unknown): CheckResult<unknown>;
}

export interface OpenApiRequests {
  /**
   * The operation serving `method` on `path` (a raw, still percent-encoded path), if the document has
   * one. HEAD is the GET operation's unless the document gives HEAD one of its own.
   */
  operation(method: string, path: string): { operation: CompiledOperation; pathParams: Record<string, string> } | undefined;
}

const DOC_ID = 'https://openapi.invalid/requests.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { type?: unknown; default?: unknown };
}

export function compileOpenApiRequests(document: OpenApiRequestDocument): OpenApiRequests {
  if (!/^3\.1\./.test(document.openapi)) throw new Error(`expected an OpenAPI 3.1 document, got ${document.openapi}`);
  // allErrors: a refusal can name every field at fault, not only the first. Formats in full mode:
  // a date-time is a real calendar date (2026-02-30 is refused), not only the right shape.
  // verbose: a pattern's error carries its schema, whose x-pattern-message (when given) says the rule in words.
  const ajv = new Ajv2020({ strict: false, allErrors: true, useDefaults: true, verbose: true });
  addFormats(ajv, { mode: 'full' });
  ajv.addSchema({ ...document, $id: DOC_ID });

  const routes: Array<{ pattern: RegExp; names: string[]; literalLength: number; operations: Map<string, CompiledOperation> }> = [];
  for (const [template, pathItem] of Object.entries(document.paths)) {
    const operations = new Map<string, CompiledOperation>();
    for (const method of METHODS) {
      if (pathItem[method] === undefined) continue;
      operations.set(method.toUpperCase(), compileOperation(ajv, template, method, pathItem));
    }
    const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const literal = template.split(/\{[^}]+\}/);
    routes.push({
      pattern: new RegExp(`^${literal.map(escapeRegExp).join('([^/]+)')}$`),
      names,
      literalLength: literal.join('').length,
      operations,
    });
  }
  // /connections/queue before /connections/{c}: the more literal template wins, as routers do.
  routes.sort((a, b) => b.literalLength - a.literalLength);

  return {
    operation(method, path) {
      for (const route of routes) {
        const match = route.pattern.exec(path);
        if (!match) continue;
        const asked = method.toUpperCase();
        // Express answers HEAD with the GET route, which reads the query this validated: HEAD is checked as GET.
        const operation = route.operations.get(asked) ?? (asked === 'HEAD' ? route.operations.get('GET') : undefined);
        if (!operation) return undefined;
        const pathParams: Record<string, string> = {};
        route.names.forEach((name, i) => {
          pathParams[name] = safeDecode(match[i + 1] ?? '');
        });
        return { operation, pathParams };
      }
      return undefined;
    },
  };
}

function compileOperation(ajv: Ajv2020, template: string, method: string, pathItem: Readonly<Record<string, unknown>>): CompiledOperation {
  const operation = pathItem[method] as { parameters?: unknown[]; requestBody?: { required?: boolean; content?: Record<string, unknown> } };
  const pointer = (...tokens: Array<string | number>) => `${DOC_ID}#/${tokens.map((t) => escapePointer(String(t))).join('/')}`;
  // Parameters of the path item apply to every operation under it; the operation's own come after.
  const parameters = [
    ...listed(pathItem.parameters).map((p, i) => ({ p, ref: pointer('paths', template, 'parameters', i, 'schema') })),
    ...listed(operation.parameters).map((p, i) => ({ p, ref: pointer('paths', template, method, 'parameters', i, 'schema') })),
  ];
  const objectOf = (location: string, closed: boolean) => {
    const chosen = parameters.filter(({ p }) => p.in === location);
    const properties = Object.fromEntries(
      chosen.map(({ p, ref }) => [p.name, p.schema && 'default' in p.schema ? { $ref: ref, default: p.schema.default } : { $ref: ref }]),
    );
    const schema = {
      type: 'object',
      properties,
      required: chosen.filter(({ p }) => p.required).map(({ p }) => p.name),
      ...(closed ? { additionalProperties: false } : {}),
    };
    return { validate: ajv.compile(schema), types: new Map(chosen.map(({ p }) => [p.name, p.schema?.type])) };
  };
  const pathCheck = objectOf('path', false);
  const queryCheck = objectOf('query', true);
  const json = operation.requestBody?.content?.['application/json'];
  const bodyCheck =
    json === undefined ? undefined : ajv.compile({ $ref: pointer('paths', template, method, 'requestBody', 'content', 'application/json', 'schema') });
  const bodyRequired = operation.requestBody?.required === true;

  return {
    template,
    method: method.toUpperCase(),
    takesJson: bodyCheck !== undefined,
    checkParameters(pathParams, query) {
      const pathValues = { ...pathParams };
      if (!pathCheck.validate(pathValues)) return { ok: false, problem: describe('path parameter', pathCheck.validate.errors) };
      // No prototype: on a plain object `values.__proto__ = …` sets the prototype instead of a member,
      // and ?__proto__=1 would slip past the refusal of unknown parameters.
      const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const name of new Set(query.keys())) {
        const given = query.getAll(name);
        if (given.length > 1) return { ok: false, problem: `query parameter ${quoted(name)} is given more than once` };
        values[name] = fromQueryText(given[0] ?? '', queryCheck.types.get(name));
      }
      if (!queryCheck.validate(values)) return { ok: false, problem: describe('query parameter', queryCheck.validate.errors) };
      return { ok: true, value: values };
    },
    checkJsonBody(body) {
      if (body === undefined)
        return bodyRequired ? { ok: false, problem: 'the body is required: a JSON value as the document describes' } : { ok: true, value: body };
      if (!bodyCheck) return { ok: false, problem: 'this operation takes no JSON body' };
      if (!bodyCheck(body)) return { ok: false, problem: describe('body', bodyCheck.errors) };
      return { ok: true, value: body };
    },
  };
}

function listed(value: unknown): Parameter[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error('parameters must be a list');
  return value.map((p: unknown) => {
    if (typeof p !== 'object' || p === null || !('name' in p) || !('in' in p)) {
      // A $ref parameter would slip past validation unnoticed: refuse the document at start-up instead.
      throw new Error(`unsupported parameter in the OpenAPI document: ${JSON.stringify(p)}`);
    }
    return p as Parameter;
  });
}

/** Query text read into the parameter's declared type; what does not read stays text and fails the schema. */
function fromQueryText(text: string, type: unknown): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** One line naming each field at fault (the first three), never quoting a value the caller sent. */
function describe(where: string, errors: ErrorObject[] | null | undefined): string {
  const problems = new Set<string>();
  for (const error of closestBranches(errors ?? [])) {
    const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'required') {
      const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
      problems.add(`${where} ${quoted(field ? `${field}.${missing}` : missing)} is required`);
    } else if (error.keyword === 'additionalProperties') {
      const extra = String((error.params as { additionalProperty?: unknown }).additionalProperty);
      problems.add(where === 'body' ? `${where} has an unknown field ${quoted(field ? `${field}.${extra}` : extra)}` : `unknown ${where} ${quoted(extra)}`);
    } else if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') {
      // The branch errors say what is wrong; "must match exactly one schema" adds nothing.
      continue;
    } else {
      const words = error.keyword === 'pattern' ? (error.parentSchema as { 'x-pattern-message'?: unknown } | undefined)?.['x-pattern-message'] : undefined;
      problems.add(`${where}${field ? ` ${quoted(field)}` : ''} ${typeof words === 'string' ? words : (error.message ?? 'is invalid')}`);
    }
  }
  return [...problems].slice(0, 3).join('; ') || `${where} is invalid`;
}

/**
 * A value that fits none of a oneOf/anyOf's branches fails each branch its own way; the branch it
 * misses by least is the one the caller meant ({ "tier": "custom", "per_second": 201, … } meant the
 * custom branch: its maximum, not the named tiers' "unknown field per_second"). Keeps only that
 * branch's errors.
 */
function closestBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  let kept = [...errors];
  for (const choice of errors.filter((e) => e.keyword === 'oneOf' || e.keyword === 'anyOf')) {
    const prefix = `${choice.schemaPath}/`;
    const byBranch = new Map<string, ErrorObject[]>();
    for (const error of kept) {
      if (!error.schemaPath.startsWith(prefix)) continue;
      const branch = error.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      byBranch.set(branch, [...(byBranch.get(branch) ?? []), error]);
    }
    const closest = [...byBranch.values()].sort((a, b) => a.length - b.length)[0];
    kept = kept.filter((error) => !error.schemaPath.startsWith(prefix) || closest?.includes(error));
  }
  return kept;
}

function quoted(name: string): string {
  return JSON.stringify(name.slice(0, 60));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
}

function escapePointer(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export interface RequestValidation {
  /**
   * Middleware for the routes of the document: checks the path and query parameters of the request's
   * operation, answering `invalid(problem)` (the route's documented 400). Mount it after
   * authentication, so a caller without credentials learns nothing about the parameters.
   */
  parameters: RequestHandler;
  /** Reads the body (up to `limitBytes`), parses it as JSON and checks it against the operation's schema. */
  jsonBody(req: Request, limitBytes: number): Promise<unknown>;
}

/** application/json, with no parameter but charset=utf-8 (the body is read as UTF-8). */
function isJsonMediaType(contentType: string | undefined): boolean {
  const [type, ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  return type === 'application/json' && parameters.every((p) => p === '' || p.replace(/\s*=\s*/, '=').replace(/"/g, '') === 'charset=utf-8');
}

const validatedQueries = new WeakMap<Request, Record<string, unknown>>();

/** The query of a request the `parameters` middleware passed, read into its types with defaults. */
export function validatedQuery(req: Request): Readonly<Record<string, unknown>> {
  const query = validatedQueries.get(req);
  if (!query) throw new Error(`${req.method} ${req.path}: the query was not validated (mount requestValidation().parameters on this route)`);
  return query;
}

export interface RequestValidationOptions {
  /**
   * A body is read only when its Content-Type is application/json (UTF-8): set on routes whose callers
   * carry ambient credentials (a browser's cached Basic credentials, a session cookie), where another
   * site's form could otherwise post JSON as text/plain without a CORS preflight.
   */
  requireJsonMediaType?: boolean;
}

export function requestValidation(
  document: OpenApiRequestDocument,
  invalid: (problem: string) => HttpError,
  options: RequestValidationOptions = {},
): RequestValidation {
  const requests = compileOpenApiRequests(document);
  const operationOf = (req: Request) => requests.operation(req.method, new URL(req.originalUrl, 'http://host').pathname);
  return {
    parameters: (req: Request, _res: Response, next: NextFunction) => {
      const found = operationOf(req);
      // Not an operation of the document: routing answers it (404, or 405 with Allow).
      if (!found) return next();
      const search = new URL(req.originalUrl, 'http://host').searchParams;
      const checked = found.operation.checkParameters(found.pathParams, search);
      if (!checked.ok) return next(invalid(checked.problem));
      validatedQueries.set(req, checked.value);
      next();
    },
    jsonBody: async (req, limitBytes) => {
      const found = operationOf(req);
      if (!found) throw new Error(`${req.method} ${req.originalUrl}: no operation of the document takes this body`);
      const bytes = await readBody(req, limitBytes);
      if (options.requireJsonMediaType && bytes.length > 0 && !isJsonMediaType(req.header('content-type'))) {
        throw invalid('the body must be sent as Content-Type: application/json (UTF-8)');
      }
      let body: unknown;
      if (bytes.length > 0) {
        // The messages' own reading (I-JSON): a duplicate member name, which JSON.parse would settle by
        // keeping the last, is refused rather than guessed at, as are the rest of what readers disagree on.
        const parsed = parseIJson(bytes);
        if (!parsed.ok) throw invalid(ijsonProblemText(parsed.problem));
        body = parsed.value;
      }
      const checked = found.operation.checkJsonBody(body);
      if (!checked.ok) throw invalid(checked.problem);
      return checked.value;
    },
  };
}
