import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * A hostile producer against a whole bus (docs/errors.md): what one sends must never multiply into
 * someone else's problem. One UUID is one message in every spelling; a body of tens of thousands of
 * unknown members is one small answer and one small record, and a normal producer beside forty such
 * bodies in flight is served; no spelling of a path reaches a route unvalidated (never a 500), nor a
 * HEAD, a target that does not decode or a __proto__ parameter; the HTTP edges (Expect,
 * Content-Encoding, Transfer-Encoding, a missing Host, a second Authorization) answer in JSON before
 * any body is read.
 */
const busApi = createOpenApiChecker(openapi.bus);
const SYSTEM_ID = 'storyteller.web';
const MAX_ANSWER_BYTES = 64 * 1024;

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let token: string;
let operatorBasic: string;

beforeAll(async () => {
  // Bursts of hostile bodies, and the walk over every route in two spellings, must reach what is tested,
  // not the host's per-address limits.
  bus = await startBus({ BUS_LIMIT_PER_ADDRESS_PER_MINUTE: '1000000', BUS_LIMIT_API_PER_SECOND: '100000', BUS_LIMIT_API_BURST: '200000' });
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  // A custom tier, as an operator would give a load test: the connection's own quota is not what is tested.
  await tenants
    .db('workspaces')
    .where({ id: house.workspaceId })
    .update({ quota_tier: 'custom', custom_per_second: 200, custom_burst: 400, custom_per_day: 10_000_000 });
  token = await tenants.token(house.producer);
  operatorBasic = Buffer.from(`${bus.env.OPERATOR_CLIENT_ID}:${bus.env.OPERATOR_CLIENT_SECRET}`).toString('base64');
}, 120_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
});

type Example = Record<string, unknown> & { message_id: string; correlation_id: string };
const storyContext = (extra: Record<string, unknown> = {}): Example => ({
  ...(som.examples['story.context'] as Example),
  message_id: randomUUID(),
  correlation_id: `c-${randomUUID()}`,
  occurred_at: new Date().toISOString(),
  ...extra,
});
const messagesPath = () => `/v1/tenants/${house.workspaceId}/messages`;

async function publish(body: string) {
  const res = await fetchObserved(`${bus.busUrl}${messagesPath()}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body,
  });
  busApi.check('POST', messagesPath(), res);
  return res;
}
const rulesOf = (body: unknown) => (body as { violations?: Array<{ rule: string }> }).violations?.map((v) => v.rule) ?? [];

/** An answer's body read as JSON, or undefined when it is not JSON (a bare status from a parser). */
function jsonOrNothing(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
describe('one UUID, one message', () => {
  it('accepts a message_id in its canonical spelling only, so no spelling makes a second message', async () => {
    const message = storyContext({ message_id: 'dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572' });
    const spellings = [
      'dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572',
      'DC9C9E64-FBD0-4F66-8D8A-A247F1FBB572',
      'dc9C9e64-FBd0-4f66-8D8a-a247F1fbb572',
      'urn:uuid:dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572',
      'URN:UUID:dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572',
      'urn:uuid:DC9C9E64-FBD0-4F66-8D8A-A247F1FBB572',
    ];
    const answers = [];
    for (const spelling of spellings) {
      const res = await publish(JSON.stringify({ ...message, message_id: spelling }));
      answers.push([res.status, ...rulesOf(res.body)]);
    }
    expect(answers).toEqual([[202], ...spellings.slice(1).map(() => [400, 'conformance.message_id_not_canonical'])]);
    const accepted = await tenants.db('accepted_messages').where({ workspace_id: house.workspaceId }).whereRaw('lower(message_id) like ?', ['%dc9c9e64%']);
    expect(accepted).toHaveLength(1);
    // The tester route finds the message by any spelling.
    const traced = await fetchObserved(`${bus.busUrl}/v1/tenants/${house.workspaceId}/messages/DC9C9E64-FBD0-4F66-8D8A-A247F1FBB572`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect([traced.status, (traced.body as { message_id?: string }).message_id]).toEqual([200, 'dc9c9e64-fbd0-4f66-8d8a-a247f1fbb572']);
  }, 30_000);

  it.each(['urn:uuid:00000000-0000-0000-0000-000000000000', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'])(
    'refuses the nil and max UUIDs in every spelling: %s',
    async (id) => {
      const res = await publish(JSON.stringify(storyContext({ message_id: id })));
      expect([res.status, rulesOf(res.body)]).toEqual([400, ['conformance.message_id_nil']]);
    },
  );
});

/** A story.context with `members` unknown envelope members `"<base-36 n>":0`: about 216 KB at 25,000, under the 240,000-byte limit. */
function memberBomb(members: number): string {
  const base = JSON.stringify(storyContext());
  const extra = Array.from({ length: members }, (_, i) => `"${i.toString(36)}":0`).join(',');
  return `${base.slice(0, -1)},${extra}}`;
}

function rssBytes(): number {
  const status = readFileSync(`/proc/${bus.process.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

describe('answers and records bounded', () => {
  it('answers a body of 25,000 unknown members with one small refusal that counts what it left out', async () => {
    const body = memberBomb(25_000);
    expect(Buffer.byteLength(body)).toBeLessThan(240_000);
    const res = await publish(body);
    expect(res.status).toBe(400);
    expect(Buffer.byteLength(JSON.stringify(res.body))).toBeLessThan(MAX_ANSWER_BYTES);
    const refused = res.body as { violations: unknown[]; violations_omitted: number };
    expect(refused.violations).toHaveLength(50);
    expect(refused.violations.length + refused.violations_omitted).toBe(25_000);
  }, 30_000);

  it('serves a normal producer beside 40 hostile bodies in flight, and pages its refusals under 64 KB', async () => {
    const hostile = memberBomb(25_000);
    const rssBefore = rssBytes();
    let rssPeak = rssBefore;
    let hostileRunning = true;
    const hostileAnswers: number[] = [];
    const flood = Array.from({ length: 40 }, async () => {
      for (let round = 0; round < 3; round++) hostileAnswers.push((await publish(hostile)).status);
    });
    const floodDone = Promise.all(flood).finally(() => (hostileRunning = false));
    const normalMs: number[] = [];
    const normalStatuses: number[] = [];
    while (hostileRunning || normalMs.length < 20) {
      const started = Date.now();
      const res = await publish(JSON.stringify(storyContext()));
      normalMs.push(Date.now() - started);
      normalStatuses.push(res.status);
      rssPeak = Math.max(rssPeak, rssBytes());
    }
    await floodDone;
    normalMs.sort((a, b) => a - b);
    const p99 = normalMs[Math.ceil(normalMs.length * 0.99) - 1] ?? 0;
    process.stdout.write(
      `hostile bodies: ${hostileAnswers.length} answered; normal publishes: ${normalMs.length}, p50 ${normalMs[Math.floor(normalMs.length / 2)]} ms, p99 ${p99} ms; RSS ${Math.round(rssBefore / 2 ** 20)} → peak ${Math.round(rssPeak / 2 ** 20)} MB\n`,
    );
    expect(new Set(hostileAnswers)).toEqual(new Set([400]));
    // docs/errors.md#bounded-refusals: what a hostile producer cannot push the bus past. Every normal
    // publish accepted is within its commit deadline (a late one is a 503); how fast is the machine's
    // as much as the bus's, so the latencies are printed, not asserted.
    expect(new Set(normalStatuses)).toEqual(new Set([202]));
    expect(rssPeak - rssBefore).toBeLessThan(300 * 2 ** 20);

    // The refusals were recorded small: every page of the view stays under 64 KB.
    const refusalsPath = `/v1/tenants/${house.workspaceId}/refusals`;
    let before: number | null = null;
    let pages = 0;
    let listed = 0;
    do {
      const res = await fetchObserved(`${bus.busUrl}${refusalsPath}?limit=50${before === null ? '' : `&before=${before}`}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      busApi.check('GET', refusalsPath, res);
      expect(res.status).toBe(200);
      expect(Buffer.byteLength(JSON.stringify(res.body))).toBeLessThan(MAX_ANSWER_BYTES);
      const page = res.body as { refusals: unknown[]; next_before: number | null };
      listed += page.refusals.length;
      before = page.next_before;
      pages++;
    } while (before !== null && pages < 10);
    expect(listed).toBeGreaterThan(0);
  }, 240_000);
});

interface Operation {
  host: 'bus' | 'portal';
  method: string;
  /** As the document spells it, e.g. /v1/tenants/{t}/messages. */
  template: string;
  path: string;
  /** The query parameters the operation lists, with their schemas. */
  query: Array<{ name: string; schema: QuerySchema }>;
}

interface QuerySchema {
  type?: string;
  minimum?: number;
  enum?: unknown[];
  pattern?: string;
}

/** Every operation of every OpenAPI document the bus serves, its path parameters filled in. */
function servedOperations(): Operation[] {
  const documents = [
    ['bus', openapi.bus],
    ['portal', openapi.admin],
    ['portal', openapi.catalogue],
  ] as const;
  type Parameters = { parameters?: Array<{ name: string; in: string; schema?: QuerySchema }> };
  const queryOf = (...lists: Parameters[]) =>
    lists.flatMap((l) => l.parameters ?? []).flatMap((p) => (p.in === 'query' ? [{ name: p.name, schema: p.schema ?? {} }] : []));
  return documents.flatMap(([host, document]) =>
    Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([template, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => ({
          host,
          method: method.toUpperCase(),
          template,
          path: template.replace(/\{[^}]+\}/g, 'x1'),
          query: queryOf(item as Parameters, item[method] as Parameters),
        })),
    ),
  );
}

describe('routing is total', () => {
  const operations = servedOperations();

  async function call(op: Operation, path: string) {
    const base = op.host === 'bus' ? bus.busUrl : bus.portalUrl;
    const authorization = op.host === 'bus' ? `Bearer ${token}` : `Basic ${operatorBasic}`;
    const takesBody = !['GET', 'DELETE'].includes(op.method);
    const res = await fetch(`${base}${path}`, {
      method: op.method,
      headers: { Authorization: authorization, ...(takesBody ? { 'Content-Type': 'application/json' } : {}) },
      ...(takesBody ? { body: '{}' } : {}),
    });
    const body = jsonOrNothing(await res.text());
    return { status: res.status, body, type: res.headers.get('content-type') ?? '' };
  }

  let consumerToken: string | undefined;
  /**
   * A GET (or HEAD) of `op` on the house's own ids, with the consumer's token on a consumer route: the
   * route itself answers, not the tenant or consumer check before it.
   */
  async function onOwnIds(op: Operation, query: URLSearchParams, method = 'GET') {
    const ids: Record<string, Record<string, string>> = {
      bus: { t: house.workspaceId, c: house.consumer.clientId },
      portal: { o: house.organisationId, w: house.workspaceId, a: house.appId, c: house.producer.clientId },
    };
    const path = `${op.template.replace(/\{([^}]+)\}/g, (_, name: string) => ids[op.host]?.[name] ?? 'x1')}${query.size > 0 ? `?${query}` : ''}`;
    consumerToken ??= await tenants.token(house.consumer);
    const bearer = op.template.includes('/consumers/') ? consumerToken : token;
    const res = await fetch(`${op.host === 'bus' ? bus.busUrl : bus.portalUrl}${path}`, {
      method,
      headers: { Authorization: op.host === 'bus' ? `Bearer ${bearer}` : `Basic ${operatorBasic}` },
    });
    const body = jsonOrNothing(await res.text());
    const message = (body as { message?: string; violations?: Array<{ message: string }> } | undefined) ?? {};
    return {
      path,
      status: res.status,
      requestId: res.headers.get('x-request-id'),
      rule: rulesOrCode(body),
      message: message.message ?? message.violations?.[0]?.message ?? '',
    };
  }

  it('walks every served operation in its own spelling, with a trailing slash and in upper case', async () => {
    expect(operations.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const op of operations) {
      const own = await call(op, op.path);
      // The documented spelling reaches its route (any answer but "no route"), never a 5xx.
      if (own.status >= 500 || (own.status === 404 && rulesOrCode(own.body) === 'route.not_found')) wrong.push(`${op.method} ${op.path} → ${own.status}`);
      // A variant that is itself a documented path (the SQS door is served with and without its slash) is that path's own.
      const variants = [`${op.path}/`, op.path.toUpperCase()].filter(
        (variant) => !operations.some((other) => other.host === op.host && other.path === variant),
      );
      for (const variant of variants) {
        const answer = await call(op, variant);
        const json = answer.type.startsWith('application/json') && answer.body !== undefined;
        if (answer.status !== 404 || !json || rulesOrCode(answer.body) !== 'route.not_found')
          wrong.push(`${op.method} ${variant} → ${answer.status} ${answer.type}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  /**
   * HEAD is in no document (express serves it with the GET route), so a walk of the documented
   * methods never sends it; and with placeholder ids a bus route stops at its tenant check, before
   * it reads its query. This walk sends HEAD beside GET on every GET operation, on the house's own
   * ids with each query parameter it can fill, so the route itself answers.
   */
  it('answers HEAD as GET on every GET operation, its query parameters given, never a 5xx', async () => {
    const known: Record<string, string> = { organisation_id: house.organisationId, workspace_id: house.workspaceId, app_id: house.appId };
    const valueOf = ({ name, schema }: Operation['query'][number]): string | undefined => {
      if (known[name]) return known[name];
      // The least of a number: wait_seconds=0 answers a receive at once.
      if (schema.type === 'integer' || schema.type === 'number') return String(schema.minimum ?? 1);
      if (schema.enum) return String(schema.enum[0]);
      return schema.pattern === undefined ? 'x1' : undefined;
    };
    const wrong: string[] = [];
    let withQuery = 0;
    for (const op of operations.filter((o) => o.method === 'GET')) {
      const query = new URLSearchParams();
      for (const parameter of op.query) {
        const value = valueOf(parameter);
        if (value !== undefined) query.set(parameter.name, value);
      }
      if (query.size > 0) withQuery += 1;
      const get = await onOwnIds(op, query);
      const head = await onOwnIds(op, query, 'HEAD');
      if (head.status >= 500 || head.status !== get.status || !head.requestId) wrong.push(`HEAD ${head.path} → ${head.status} (GET ${get.status})`);
    }
    expect(withQuery).toBeGreaterThan(8);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('refuses ?__proto__ wherever it refuses an unknown query parameter', async () => {
    const wrong: string[] = [];
    let refusing = 0;
    for (const op of operations.filter((o) => o.method === 'GET' && o.query.length > 0)) {
      const unknown = await onOwnIds(op, new URLSearchParams([['zz', '1']]));
      // Refused for the unknown parameter, not for a placeholder id in the path.
      if (unknown.status !== 400 || !unknown.message.includes('"zz"')) continue;
      refusing += 1;
      const proto = await onOwnIds(op, new URLSearchParams([['__proto__', '1']]));
      if (proto.status !== 400 || proto.rule !== unknown.rule || !proto.message.includes('__proto__'))
        wrong.push(`${proto.path} → ${proto.status} ${proto.rule}`);
    }
    expect(refusing).toBeGreaterThanOrEqual(8);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('answers a method no route of a documented path serves with 405 and Allow, on every path', async () => {
    const wrong: string[] = [];
    const paths = new Map<string, Operation>();
    for (const op of operations) paths.set(`${op.host} ${op.path}`, op);
    for (const op of paths.values()) {
      const served = operations.filter((other) => other.host === op.host && other.path === op.path).map((other) => other.method);
      const base = op.host === 'bus' ? bus.busUrl : bus.portalUrl;
      // PATCH: no route of the bus serves it (fetch refuses to send TRACE, the fuzzer's choice).
      // With the host's credentials: the admin API authenticates before it looks at the method.
      const authorization = op.host === 'bus' ? `Bearer ${token}` : `Basic ${operatorBasic}`;
      const res = await fetch(`${base}${op.path}`, { method: 'PATCH', headers: { Authorization: authorization } });
      await res.arrayBuffer();
      const allow = (res.headers.get('allow') ?? '').split(', ');
      if (res.status !== 405 || !served.every((method) => allow.includes(method))) wrong.push(`PATCH ${op.path} → ${res.status} Allow: ${allow.join(', ')}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});

describe('request targets that do not decode', () => {
  it('answers a malformed escape in any path parameter 400 request.malformed, on both hosts, whatever the method', async () => {
    const templates = new Map<string, Operation>();
    for (const op of servedOperations()) if (op.template.includes('{')) templates.set(`${op.host} ${op.template}`, op);
    expect(templates.size).toBeGreaterThan(20);
    // Every bad spelling with GET; every method with one of them.
    const cases: Array<[method: string, escape: string]> = [
      ...['%ZZ', '%ff%fe', '%C0%AF', '%E0%A4%A'].map((escape): [string, string] => ['GET', escape]),
      ...['HEAD', 'POST', 'DELETE', 'OPTIONS'].map((method): [string, string] => [method, '%ZZ']),
    ];
    const logFrom = bus.process.output().length;
    const wrong: string[] = [];
    for (const op of templates.values()) {
      for (const [method, escape] of cases) {
        const path = op.template.replace(/\{[^}]+\}/g, escape);
        const res = await fetch(`${op.host === 'bus' ? bus.busUrl : bus.portalUrl}${path}`, {
          method,
          headers: { Authorization: op.host === 'bus' ? `Bearer ${token}` : `Basic ${operatorBasic}` },
        });
        const text = await res.text();
        // The SQS door answers its own protocol's error shape (AWS JSON) for the same refusal.
        const shape = op.template.startsWith('/v1/sqs') ? /^application\/x-amz-json-1\.0/ : /^application\/json/;
        const json =
          method === 'HEAD' ||
          (shape.test(res.headers.get('content-type') ?? '') && (rulesOrCode(JSON.parse(text)) === 'request.malformed' || op.template.startsWith('/v1/sqs')));
        if (res.status !== 400 || !json || !res.headers.get('x-request-id')) wrong.push(`${method} ${path} → ${res.status} ${text.slice(0, 80)}`);
      }
    }
    expect(wrong).toEqual([]);
    // A client's mistake, not a fault of the bus: nothing logged as an error. The log is read once a
    // last request's own line is in it, so every line of the walk is.
    const last = `walk-${randomUUID()}`;
    await (await fetch(`${bus.busUrl}/v1/health/%ZZ`, { headers: { 'X-Request-Id': last } })).arrayBuffer();
    const log = await eventually(
      () => bus.process.output().slice(logFrom),
      (text) => text.includes(last),
    );
    expect(log).not.toMatch(/URI malformed|Failed to decode param|"level":"error"/);
  }, 60_000);

  it('refuses a bad escape in the query before the firewall, which then reads every pattern, encoded traversal included', async () => {
    const answers: Record<string, string> = {};
    for (const target of [
      '/v1/health?a=%ZZ&q=%3Cscript%3E',
      '/v1/health?q=%3Cscript%3E',
      '/v1/x/..%2Fhealth',
      '/v1/x%2F..%2Fhealth',
      '/v1/x/..%5Chealth',
      '/v1/x/..%252Fhealth',
      '/v1/x/%2e%2e/health',
    ]) {
      // Raw, so no client normalises the target on the way.
      const answer = await raw(bus.busUrl, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      answers[target] = `${answer.slice(9, 12)} ${/"rule":"([^"]+)"/.exec(answer)?.[1] ?? ''}`;
    }
    expect(answers).toEqual({
      '/v1/health?a=%ZZ&q=%3Cscript%3E': '400 request.malformed',
      '/v1/health?q=%3Cscript%3E': '403 request.blocked',
      '/v1/x/..%2Fhealth': '403 request.blocked',
      '/v1/x%2F..%2Fhealth': '403 request.blocked',
      '/v1/x/..%5Chealth': '403 request.blocked',
      '/v1/x/..%252Fhealth': '403 request.blocked',
      '/v1/x/%2e%2e/health': '403 request.blocked',
    });
  });
});

/** The rule of a bus-shaped body, or the code of a portal-shaped one. */
function rulesOrCode(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  if ('code' in body) return String(body.code);
  return rulesOf(body)[0];
}

/** Writes `head` on a raw socket; collects everything until the server closes (or 5 s pass). */
async function raw(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(Number(port), hostname, () => socket.write(head));
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    // A bound on a silent server (the socket's idle timeout), not a wait: the test reads until close.
    // eslint-disable-next-line no-restricted-syntax
    socket.setTimeout(5000, () => socket.destroy());
  });
}

describe('HTTP edges', () => {
  it('refuses a publish with a bad token or a 10 MB Content-Length before 100 Continue', async () => {
    const path = messagesPath();
    const badToken = await raw(
      bus.busUrl,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer nope\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(badToken).toMatch(/^HTTP\/1\.1 401 /);
    expect(badToken).not.toContain('100 Continue');
    const tooLarge = await raw(
      bus.busUrl,
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    expect(tooLarge).not.toContain('100 Continue');
  });

  it('writes 100 Continue for a publish that passed its checks, then accepts it', async () => {
    const body = JSON.stringify(storyContext());
    const { hostname, port } = new URL(bus.busUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      let received = '';
      const socket = connect(Number(port), hostname, () =>
        socket.write(
          `POST ${messagesPath()} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        ),
      );
      socket.on('data', (d: Buffer) => {
        if (received === '' && d.toString('utf8').startsWith('HTTP/1.1 100 Continue')) socket.write(body);
        received += d.toString('utf8');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
      // eslint-disable-next-line no-restricted-syntax
      socket.setTimeout(10_000, () => socket.destroy());
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
  });

  it.each(['bus', 'portal'] as const)('answers an unknown Expect 417 with a JSON body and X-Request-Id on the %s host', async (host) => {
    const answer = await raw(
      host === 'bus' ? bus.busUrl : bus.portalUrl,
      'POST /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: something\r\n\r\n{}',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 417 /);
    expect(answer).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(answer).toMatch(/\r\n\r\n\{.*"request\.expectation_failed".*\}$/s);
  });

  it.each(['bus', 'portal'] as const)('answers an HTTP/1.1 request without Host 400 request.malformed in JSON on the %s host, and closes', async (host) => {
    const answer = await raw(host === 'bus' ? bus.busUrl : bus.portalUrl, 'GET /healthz HTTP/1.1\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toMatch(/\r\n\r\n\{.*"request\.malformed".*\}$/s);
  });

  it.each(['gzip, chunked', 'x-unknown, chunked', 'deflate,chunked'])(
    'refuses Transfer-Encoding: %s with 400 request.malformed, even around a plain JSON message',
    async (codings) => {
      const body = JSON.stringify(storyContext());
      const size = Buffer.byteLength(body).toString(16);
      const answer = await raw(
        bus.busUrl,
        `POST /v1/tenants/${house.workspaceId}/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${codings}\r\n\r\n${size}\r\n${body}\r\n0\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
      expect(answer).toMatch(/\r\n\r\n\{.*"request\.malformed".*\}$/s);
    },
  );

  it('refuses a Content-Encoding with 415 and two Authorization headers with 400', async () => {
    const gzip = await fetchObserved(`${bus.busUrl}${messagesPath()}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: JSON.stringify(storyContext()),
    });
    busApi.check('POST', messagesPath(), gzip);
    expect([gzip.status, rulesOf(gzip.body)]).toEqual([415, ['request.content_encoding_unsupported']]);
    const twice = await raw(
      bus.busUrl,
      `GET /v1/tenants/${house.workspaceId}/refusals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`,
    );
    expect(twice).toMatch(/^HTTP\/1\.1 400 /);
    expect(twice).toContain('request.malformed');
  });
});
