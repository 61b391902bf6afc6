import { openapi } from '@bus/schemas';
import { createOpenApiChecker } from '@bus/testing';
import { SECRET_NOTE } from './render';
import { run, type Io } from './run';

const ENV = { BUSCTL_URL: 'http://portal.test:8090', BUSCTL_CLIENT_ID: 'operator', BUSCTL_CLIENT_SECRET: 'operator-secret' };
const BASIC = `Basic ${Buffer.from('operator:operator-secret').toString('base64')}`;

interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  redirect: unknown;
}

// The scripted answers are the portal's, so they are checked against its document: a test
// cannot pass on a body, status or header the portal would never send. A proxy's page is not the portal's.
const adminApi = createOpenApiChecker(openapi.admin);
const NOT_THE_PORTAL = new WeakSet<() => Response>();
const offDocument: string[] = [];
afterEach(() => {
  expect(offDocument.splice(0)).toEqual([]);
});

async function checkAgainstDocument(method: string, url: string, response: Response): Promise<void> {
  const text = await response.clone().text();
  try {
    adminApi.check(method, url, { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) });
  } catch (err) {
    offDocument.push((err as Error).message);
  }
}

/** A fake portal answering the scripted responses in order, and everything busctl printed. */
function harness(responses: Array<() => Response>, files: Record<string, string> = {}) {
  const sent: Sent[] = [];
  const out = { stdout: '', stderr: '' };
  const sleeps: number[] = [];
  const io: Io = {
    fetch: async (input, init) => {
      sent.push({
        method: init?.method ?? 'GET',
        url: String(input),
        headers: init?.headers as Record<string, string>,
        body: init?.body instanceof Uint8Array ? Buffer.from(init.body).toString('utf8') : init?.body,
        redirect: init?.redirect,
      });
      const next = responses.shift();
      if (!next) throw new Error(`unexpected request ${init?.method} ${String(input)}`);
      const response = next();
      if (!NOT_THE_PORTAL.has(next)) await checkAgainstDocument(init?.method ?? 'GET', String(input), response);
      return response;
    },
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return Buffer.from(text);
    },
    readDir: async () => undefined,
    writeFile: async (path) => {
      throw new Error(`unexpected write of ${path}`);
    },
    stdout: (text) => void (out.stdout += text),
    stderr: (text) => void (out.stderr += text),
    sleep: async (ms) => void sleeps.push(ms),
    now: () => new Date('2026-11-22T06:00:00.000Z'),
  };
  return { io, sent, out, sleeps, run: (argv: string[], env: Record<string, string> = ENV) => run(argv, env, io) };
}

/** The headers the portal sends on every answer (admin.json). */
const PORTAL_HEADERS = { 'x-request-id': 'req-1', 'cache-control': 'no-store' };
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { ...PORTAL_HEADERS, 'content-type': 'application/json', ...headers } });
const apiError = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  json(status, { code, message, request_id: 'req-1' }, headers);
const noContent = () => new Response(null, { status: 204, headers: PORTAL_HEADERS });
/** An answer from something in front of the portal (a proxy's error page): not the portal's document. */
const notThePortal = (respond: () => Response) => {
  NOT_THE_PORTAL.add(respond);
  return respond;
};

const CONNECTION = {
  client_id: 'cabcdefghijkl',
  app_id: 'aabcdefghijkl',
  workspace_id: 'wabcdefghijkl',
  organisation_id: 'oabcdefghijkl',
  kind: 'producer',
  status: 'active',
  name: 'Studio publisher',
  description: '',
  credential_version: 1,
  created_at: '2026-11-22T06:00:00.000Z',
  status_changed_at: null,
  last_used_at: null,
  consumer_tools: null,
};
const ISSUED = { client_id: 'cabcdefghijkl', client_secret: 'sbs_issued', credential_version: 1, connection: CONNECTION };
const ORG = {
  id: 'oabcdefghijkl',
  name: 'Harbour',
  kind: 'house',
  quota: { tier: 'standard', per_second: 20, burst: 40, per_day: 100000 },
  created_at: '2026-11-22T06:00:00.000Z',
};
const replay = (status: string, more: Record<string, unknown> = {}) => ({
  replay_id: 'pabcdefghijkl',
  client_id: 'cabcdefghijkl',
  since: '2026-11-22T04:00:00.000Z',
  status,
  scanned: 10,
  replayed: 8,
  skipped: 2,
  requested_at: '2026-11-22T06:00:00.000Z',
  finished_at: status === 'running' ? null : '2026-11-22T06:00:03.000Z',
  error: null,
  ...more,
});

describe('run', () => {
  it('prints help on stdout and exits 0 without a request or credentials', async () => {
    const h = harness([]);
    expect(await h.run(['connection', '--help'], {})).toBe(0);
    expect(h.out.stdout).toContain('busctl connection create');
    expect(h.sent).toEqual([]);
  });

  it('prints a usage error and the help on stderr and exits 2', async () => {
    const h = harness([]);
    expect(await h.run(['connection', 'create', '--app', 'a1'])).toBe(2);
    expect(h.out.stderr).toMatch(/^busctl: missing --kind producer\|consumer\n\nbusctl connection create: /);
    expect(h.out.stdout).toBe('');
    expect(h.sent).toEqual([]);
  });

  it('exits 2 naming a missing credential variable before any request', async () => {
    const h = harness([]);
    expect(await h.run(['org', 'list'], { BUSCTL_CLIENT_ID: 'operator' })).toBe(2);
    expect(h.out.stderr).toBe('busctl: BUSCTL_CLIENT_SECRET is not set: the operator client secret\n');
    expect(h.sent).toEqual([]);
  });

  it('sends the operator credentials as HTTP Basic, follows no redirect, and prints a table', async () => {
    const h = harness([json(200, { organisations: [ORG], next_after: null })]);
    expect(await h.run(['org', 'list'])).toBe(0);
    expect(h.sent).toEqual([
      {
        method: 'GET',
        url: 'http://portal.test:8090/api/admin/organisations',
        headers: { authorization: BASIC, accept: 'application/json' },
        body: undefined,
        redirect: 'manual',
      },
    ]);
    expect(h.out.stdout).toMatch(/^ID +NAME +KIND +QUOTA +CREATED_AT\noabcdefghijkl {2}Harbour {2}house {2}standard/);
  });

  it('sends a JSON body and the query, with --url over BUSCTL_URL', async () => {
    const h = harness([json(200, { connections: [], next_after: null }), json(201, ORG, { location: `/api/admin/organisations/${ORG.id}` })]);
    await h.run(['connection', 'list', '--workspace', 'w 1', '--app', 'a1', '--url', 'http://other:1']);
    await h.run(['org', 'create', '--name', 'Harbour', '--kind', 'house']);
    expect(h.sent.map((s) => [s.method, s.url, s.headers['content-type'], s.body])).toEqual([
      ['GET', 'http://other:1/api/admin/connections?workspace_id=w+1&app_id=a1', undefined, undefined],
      ['POST', 'http://portal.test:8090/api/admin/organisations', 'application/json', '{"name":"Harbour","kind":"house"}'],
    ]);
  });

  it('lists every page of a paged list as one table, and --json as one body', async () => {
    const second = { ...CONNECTION, client_id: 'cbbbbbbbbbbbb' };
    const h = harness([
      json(200, { connections: [CONNECTION], next_after: CONNECTION.client_id }),
      json(200, { connections: [second], next_after: null }),
      json(200, { connections: [CONNECTION], next_after: CONNECTION.client_id }),
      json(200, { connections: [second], next_after: null }),
    ]);
    expect(await h.run(['connection', 'list', '--workspace', 'wabcdefghijkl'])).toBe(0);
    expect(h.sent.map((s) => s.url)).toEqual([
      'http://portal.test:8090/api/admin/connections?workspace_id=wabcdefghijkl',
      `http://portal.test:8090/api/admin/connections?workspace_id=wabcdefghijkl&after=${CONNECTION.client_id}`,
    ]);
    expect(h.out.stdout.split('\n').filter((line) => /^c[a-z2-7]{12} /.test(line))).toHaveLength(2);
    h.out.stdout = '';
    expect(await h.run(['connection', 'list', '--json'])).toBe(0);
    expect(JSON.parse(h.out.stdout)).toEqual({ connections: [CONNECTION, second], next_after: null });
  });

  it('prints the body as it is, pretty, with --json', async () => {
    const h = harness([json(200, ORG)]);
    expect(await h.run(['org', 'show', 'o1', '--json'])).toBe(0);
    expect(h.out.stdout).toBe(`${JSON.stringify(ORG, null, 2)}\n`);
  });

  it('shows a new secret once, saying so: in the output, or on stderr with --json so stdout stays JSON', async () => {
    const h = harness([
      json(201, ISSUED, { location: `/api/admin/connections/${ISSUED.client_id}` }),
      json(201, ISSUED, { location: `/api/admin/connections/${ISSUED.client_id}` }),
    ]);
    expect(await h.run(['connection', 'create', '--app', 'a1', '--kind', 'producer'])).toBe(0);
    expect(h.out.stdout).toContain('client_secret       sbs_issued\n');
    expect(h.out.stdout.endsWith(`\n${SECRET_NOTE}\n`)).toBe(true);
    h.out.stdout = '';
    expect(await h.run(['connection', 'create', '--app', 'a1', '--kind', 'producer', '--json'])).toBe(0);
    expect(JSON.parse(h.out.stdout)).toEqual(ISSUED);
    expect(h.out.stderr).toBe(`${SECRET_NOTE}\n`);
  });

  it("sends a connection's name and description at creation and replaces them with connection describe", async () => {
    const h = harness([
      json(201, ISSUED, { location: `/api/admin/connections/${ISSUED.client_id}` }),
      json(200, { ...CONNECTION, name: 'Web publisher', description: 'The web tellings' }),
    ]);
    expect(await h.run(['connection', 'create', '--app', 'a1', '--kind', 'producer', '--name', 'Studio publisher'])).toBe(0);
    expect(JSON.parse(String(h.sent[0]!.body))).toEqual({ app_id: 'a1', kind: 'producer', name: 'Studio publisher' });
    expect(h.out.stdout).toContain('name                Studio publisher\n');
    expect(await h.run(['connection', 'describe', 'cabcdefghijkl', '--name', 'Web publisher', '--description', 'The web tellings'])).toBe(0);
    expect(h.sent[1]).toMatchObject({ method: 'PUT', url: expect.stringMatching(/\/api\/admin\/connections\/cabcdefghijkl\/details$/) });
    expect(JSON.parse(String(h.sent[1]!.body))).toEqual({ name: 'Web publisher', description: 'The web tellings' });
    expect(h.out.stdout).toContain('description         The web tellings\n');
  });

  it('exits 1 on a refusal with the code and message, or the error body on stdout with --json', async () => {
    const refusal = { code: 'admin.conflict', message: 'The connection is removed', request_id: 'req-9' };
    const h = harness([json(409, refusal), json(409, refusal)]);
    expect(await h.run(['credential', 'revoke', 'c1'])).toBe(1);
    expect(h.out).toEqual({ stdout: '', stderr: 'busctl: the API refused (409 admin.conflict): The connection is removed [request req-9]\n' });
    h.out.stderr = '';
    expect(await h.run(['credential', 'revoke', 'c1', '--json'])).toBe(1);
    expect(JSON.parse(h.out.stdout)).toEqual(refusal);
    expect(h.out.stderr).toBe('');
  });

  it('passes Retry-After on to the operator', async () => {
    const h = harness([apiError(429, 'rate.limited', 'Slow down', { 'retry-after': '7' })]);
    expect(await h.run(['org', 'list'])).toBe(1);
    expect(h.out.stderr).toContain('Retry after 7 seconds.');
  });

  it('confirms a removal (204, no body), printing nothing with --json', async () => {
    const h = harness([noContent, noContent]);
    expect(await h.run(['registration', 'remove', '--consumer', 'c1', 'r1'])).toBe(0);
    expect(h.out.stdout).toBe('Removed registration r1 from c1.\n');
    expect(h.sent[0]).toMatchObject({ method: 'DELETE', url: 'http://portal.test:8090/api/admin/connections/c1/registrations/r1' });
    h.out.stdout = '';
    expect(await h.run(['connection', 'remove', 'c1', '--json'])).toBe(0);
    expect(h.out.stdout).toBe('');
  });

  it('registers an AWS principal, showing its secret once with a note, and challenges and revokes it by access key id', async () => {
    const principal = {
      access_key_id: 'AKIAABCDEFGHIJKLMNOP',
      client_id: 'cabcdefghijkl',
      role_arn: 'arn:aws:iam::123456789012:role/pub',
      status: 'pending',
      created_at: '2026-03-01T12:00:00.000Z',
      verified_at: null,
      revoked_at: null,
    };
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const h = harness([
      json(
        201,
        { access_key_id: principal.access_key_id, secret_access_key: secret, principal },
        { location: `/api/admin/connections/cabcdefghijkl/principals/${principal.access_key_id}` },
      ),
      json(201, { access_key_id: principal.access_key_id, challenge: `sbc_${'a'.repeat(43)}`, expires_at: '2026-03-01T12:10:00.000Z' }),
      json(200, { ...principal, status: 'revoked', revoked_at: '2026-03-01T12:05:00.000Z' }),
      json(200, { principals: [principal] }),
    ]);
    expect(await h.run(['principal', 'add', '--connection', 'cabcdefghijkl', '--role-arn', principal.role_arn])).toBe(0);
    expect(h.sent[0]).toMatchObject({
      method: 'POST',
      url: 'http://portal.test:8090/api/admin/connections/cabcdefghijkl/principals',
      body: JSON.stringify({ role_arn: principal.role_arn }),
    });
    expect(h.out.stdout).toMatch(/secret_access_key\s+wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY/);
    expect(h.out.stdout).toMatch(/status\s+pending/);
    expect(h.out.stdout).toContain('only time the secret access key is shown');
    h.out.stdout = '';
    expect(await h.run(['principal', 'challenge', '--connection', 'cabcdefghijkl', principal.access_key_id])).toBe(0);
    expect(h.sent[1]).toMatchObject({
      method: 'POST',
      url: `http://portal.test:8090/api/admin/connections/cabcdefghijkl/principals/${principal.access_key_id}/challenge`,
    });
    expect(h.out.stdout).toMatch(/challenge\s+sbc_a{43}/);
    h.out.stdout = '';
    expect(await h.run(['principal', 'revoke', '--connection', 'cabcdefghijkl', principal.access_key_id])).toBe(0);
    expect(h.sent[2]).toMatchObject({
      method: 'POST',
      url: `http://portal.test:8090/api/admin/connections/cabcdefghijkl/principals/${principal.access_key_id}/revoke`,
    });
    expect(h.out.stdout).toMatch(/status\s+revoked/);
    h.out.stdout = '';
    expect(await h.run(['principal', 'list', '--connection', 'cabcdefghijkl'])).toBe(0);
    expect(h.out.stdout.split('\n')[0]).toMatch(/^ACCESS_KEY_ID\s+CLIENT_ID\s+ROLE_ARN\s+STATUS/);
    expect(h.out.stdout).not.toContain(secret);
  });

  it("sets a consumer's faults and dead-letter threshold, showing the settings the answer holds", async () => {
    const tools = (faults: Record<string, number>, maxReceives: number | null) => ({
      ...CONNECTION,
      kind: 'consumer',
      consumer_tools: { faults, max_receives: maxReceives },
    });
    const h = harness([
      json(200, tools({ duplicate_rate: 0.25, delay_ms: 0, early_expiry_rate: 0.5 }, null)),
      json(200, tools({ duplicate_rate: 0.25, delay_ms: 0, early_expiry_rate: 0.5 }, 3)),
      json(200, { ...CONNECTION, kind: 'consumer', consumer_tools: null }),
      json(200, { ...CONNECTION, kind: 'consumer', consumer_tools: null }),
    ]);
    expect(await h.run(['faults', 'set', '--consumer', 'c1', '--duplicate-rate', '0.25', '--early-expiry-rate', '.5'])).toBe(0);
    expect(h.sent[0]).toMatchObject({
      method: 'PUT',
      url: 'http://portal.test:8090/api/admin/connections/c1/faults',
      body: JSON.stringify({ duplicate_rate: 0.25, delay_ms: 0, early_expiry_rate: 0.5 }),
    });
    expect(h.out.stdout).toContain('early_expiry_rate  0.5\nmax_receives       off\n');
    expect(await h.run(['dead-letter', 'policy', '--consumer', 'c1', '--max-receives', '3'])).toBe(0);
    expect(h.sent[1]).toMatchObject({
      method: 'PUT',
      url: 'http://portal.test:8090/api/admin/connections/c1/dead-letter-policy',
      body: JSON.stringify({ max_receives: 3 }),
    });
    expect(h.out.stdout).toContain('max_receives       3\n');
    expect(await h.run(['dead-letter', 'policy', '--consumer', 'c1', '--off'])).toBe(0);
    expect(h.sent[2]).toMatchObject({ body: JSON.stringify({ max_receives: null }) });
    expect(await h.run(['faults', 'off', '--consumer', 'c1'])).toBe(0);
    expect(h.sent[3]).toMatchObject({
      method: 'PUT',
      url: 'http://portal.test:8090/api/admin/connections/c1/faults',
      body: JSON.stringify({ duplicate_rate: 0, delay_ms: 0, early_expiry_rate: 0 }),
    });
  });

  it('refuses fault and threshold values the admin API would refuse, before any request', async () => {
    const h = harness([]);
    expect(await h.run(['faults', 'set', '--consumer', 'c1', '--duplicate-rate', '1.5'])).toBe(2);
    expect(await h.run(['faults', 'set', '--consumer', 'c1', '--delay-ms', '900001'])).toBe(2);
    expect(await h.run(['faults', 'set', '--consumer', 'c1'])).toBe(2);
    expect(await h.run(['dead-letter', 'policy', '--consumer', 'c1'])).toBe(2);
    expect(await h.run(['dead-letter', 'policy', '--consumer', 'c1', '--max-receives', '3', '--off'])).toBe(2);
    expect(await h.run(['dead-letter', 'policy', '--consumer', 'c1', '--max-receives', '0'])).toBe(2);
    expect(h.out.stderr).toContain("--duplicate-rate must be a number from 0 to 1, not '1.5'");
    expect(h.sent).toEqual([]);
  });

  it("lists a consumer's dead letters and redrives or discards one by id", async () => {
    const letter = { id: '41', message_id: 'm1', correlation_id: 'story-1', receive_count: 3, dead_lettered_at: '2026-11-22T05:00:00.000Z' };
    const h = harness([
      json(200, { client_id: 'cabcdefghijkl', dead_letters: [letter], truncated: false }),
      json(200, { ...letter, resolution: 'redriven', resolved_at: '2026-11-22T06:00:00.000Z' }),
      json(200, { ...letter, resolution: 'discarded', resolved_at: '2026-11-22T06:00:00.000Z' }),
      json(404, { code: 'admin.not_found', message: 'No open dead letter of connection cabcdefghijkl 41', request_id: 'req-1' }),
    ]);
    expect(await h.run(['dead-letter', 'list', '--consumer', 'cabcdefghijkl'])).toBe(0);
    expect(h.sent[0]).toMatchObject({ method: 'GET', url: 'http://portal.test:8090/api/admin/connections/cabcdefghijkl/dead-letters' });
    expect(h.out.stdout.split('\n')[1]).toMatch(/^41\s+m1\s+story-1\s+3\s+2026-11-22T05:00:00.000Z$/);
    expect(await h.run(['dead-letter', 'redrive', '--consumer', 'cabcdefghijkl', '41'])).toBe(0);
    expect(h.sent[1]).toMatchObject({ method: 'POST', url: 'http://portal.test:8090/api/admin/connections/cabcdefghijkl/dead-letters/41/redrive' });
    expect(h.out.stdout).toContain('resolution        redriven\n');
    expect(await h.run(['dead-letter', 'discard', '--consumer', 'cabcdefghijkl', '41'])).toBe(0);
    expect(h.sent[2]).toMatchObject({ method: 'POST', url: 'http://portal.test:8090/api/admin/connections/cabcdefghijkl/dead-letters/41/discard' });
    expect(await h.run(['dead-letter', 'discard', '--consumer', 'cabcdefghijkl', '41'])).toBe(1);
    expect(h.out.stderr).toContain('admin.not_found');
  });

  it("registers an identity provider and binds, lists and removes its clients' bindings", async () => {
    const provider = {
      id: 'iabcdefghijkl',
      issuer: 'https://login.example.com/',
      jwks_url: 'https://login.example.com/jwks',
      audiences: ['bus'],
      algorithms: ['RS256', 'ES256'],
      client_claim: 'azp',
      clock_tolerance_seconds: 60,
      created_at: '2026-11-22T06:00:00.000Z',
    };
    const binding = { id: 'babcdefghijkl', provider_id: provider.id, client: 'studio', connection_id: 'cabcdefghijkl', created_at: '2026-11-22T06:00:00.000Z' };
    const second = { ...binding, id: 'bbcdefghijklm', client: 'editor', created_at: '2026-11-22T06:01:00.000Z' };
    const h = harness([
      json(201, provider, { location: `/api/admin/identity-providers/${provider.id}` }),
      json(201, binding),
      apiError(409, 'admin.conflict', 'client studio of this provider is bound already; remove that binding first'),
      json(200, { bindings: [binding], next_after: binding.id }),
      json(200, { bindings: [second], next_after: null }),
      noContent,
    ]);
    const create = [
      'idp',
      'create',
      '--issuer',
      provider.issuer,
      '--jwks-url',
      provider.jwks_url,
      '--audience',
      'bus',
      '--client-claim',
      'azp',
      '--algorithms',
      'RS256,ES256',
    ];
    expect(await h.run(create)).toBe(0);
    expect(h.out.stdout).toContain('algorithms               RS256, ES256\n');
    const bind = ['binding', 'add', '--idp', provider.id, '--client', 'studio', '--connection', 'cabcdefghijkl'];
    expect(await h.run(bind)).toBe(0);
    expect(h.sent[1]).toMatchObject({ method: 'POST', url: `http://portal.test:8090/api/admin/identity-providers/${provider.id}/bindings` });
    expect(await h.run(bind)).toBe(1);
    expect(h.out.stderr).toContain('(409 admin.conflict)');
    h.out.stdout = '';
    // Every page, as one table.
    expect(await h.run(['binding', 'list', '--idp', provider.id])).toBe(0);
    expect(h.sent[4]).toMatchObject({ url: `http://portal.test:8090/api/admin/identity-providers/${provider.id}/bindings?after=${binding.id}` });
    expect(h.out.stdout.split('\n').slice(1, 3)).toEqual([
      expect.stringMatching(/^babcdefghijkl\s+studio\s+cabcdefghijkl\s+2026-11-22T06:00:00.000Z$/),
      expect.stringMatching(/^bbcdefghijklm\s+editor\s+cabcdefghijkl\s+2026-11-22T06:01:00.000Z$/),
    ]);
    expect(await h.run(['binding', 'remove', '--idp', provider.id, binding.id])).toBe(0);
    expect(h.sent[5]).toMatchObject({ method: 'DELETE', url: `http://portal.test:8090/api/admin/identity-providers/${provider.id}/bindings/${binding.id}` });
  });

  it('needs --connection and the access key id for a principal command', async () => {
    const h = harness([]);
    expect(await h.run(['principal', 'remove', 'AKIAABCDEFGHIJKLMNOP'])).toBe(2);
    expect(await h.run(['principal', 'remove', '--connection', 'c1'])).toBe(2);
    expect(h.sent).toHaveLength(0);
  });

  it('sends a skills file as it is, typed by its extension', async () => {
    const yaml = 'skills:\n  - skill_id: telling/pacing\n';
    const h = harness([json(201, { registrations: [] })], { 'skills.yaml': yaml });
    expect(await h.run(['registration', 'add', '--consumer', 'c1', '-f', 'skills.yaml'])).toBe(0);
    expect(h.sent[0]).toMatchObject({ method: 'POST', url: 'http://portal.test:8090/api/admin/connections/c1/registrations', body: yaml });
    expect(h.sent[0]?.headers['content-type']).toBe('application/yaml');
  });

  it('exits 2 when the skills file cannot be read', async () => {
    const h = harness([]);
    expect(await h.run(['registration', 'add', '--consumer', 'c1', '-f', 'missing.json'])).toBe(2);
    expect(h.out.stderr).toBe("busctl: cannot read missing.json: ENOENT: no such file or directory, open 'missing.json'\n");
    expect(h.sent).toEqual([]);
  });

  it('waits for a replay each second, honouring Retry-After, then prints the counts', async () => {
    const h = harness([
      json(202, replay('running'), { location: '/api/admin/replays/pabcdefghijkl' }),
      apiError(429, 'rate.limited', 'Slow down', { 'retry-after': '3' }),
      json(200, replay('running')),
      json(200, replay('succeeded')),
    ]);
    expect(await h.run(['replay', '--consumer', 'c1', '--since', '2h'])).toBe(0);
    expect(h.sent.map((s) => `${s.method} ${s.url.replace('http://portal.test:8090/api/admin', '')}`)).toEqual([
      'POST /connections/c1/replays',
      'GET /replays/pabcdefghijkl',
      'GET /replays/pabcdefghijkl',
      'GET /replays/pabcdefghijkl',
    ]);
    expect(h.sent[0]?.body).toBe('{"since":"2026-11-22T04:00:00.000Z"}');
    expect(h.sleeps).toEqual([1000, 3000, 1000, 1000]);
    expect(h.out.stderr).toBe('Replay pabcdefghijkl started; waiting until it ends (Ctrl-C stops the waiting, not the replay).\n');
    expect(h.out.stdout).toMatch(/status +succeeded\nscanned +10\nreplayed +8\nskipped +2\n/);
  });

  it('exits 1 when the replay ends other than succeeded, saying why', async () => {
    const h = harness([
      json(202, replay('running'), { location: '/api/admin/replays/pabcdefghijkl' }),
      json(200, replay('failed', { error: 'archive unavailable' })),
    ]);
    expect(await h.run(['replay', '--consumer', 'c1', '--since', '2h', '--json'])).toBe(1);
    expect(JSON.parse(h.out.stdout)).toMatchObject({ status: 'failed' });
    expect(h.out.stderr).toContain('busctl: replay pabcdefghijkl ended failed: archive unavailable\n');
  });

  it('exits 1 when polling a replay is refused', async () => {
    const h = harness([json(202, replay('running'), { location: '/api/admin/replays/pabcdefghijkl' }), apiError(404, 'admin.not_found', 'No replay')]);
    expect(await h.run(['replay', '--consumer', 'c1', '--since', '2h'])).toBe(1);
    expect(h.out.stderr).toContain('busctl: the API refused (404 admin.not_found): No replay [request req-1]\n');
  });

  it('prints the replay as started with --no-wait', async () => {
    const h = harness([json(202, replay('running'), { location: '/api/admin/replays/pabcdefghijkl' })]);
    expect(await h.run(['replay', '--consumer', 'c1', '--since', '2026-11-21T00:00:00Z', '--no-wait'])).toBe(0);
    expect(h.sent).toHaveLength(1);
    expect(h.out.stdout).toMatch(/status +running\n/);
  });

  it('exits 1 when the portal cannot be reached, without printing the credentials', async () => {
    const h = harness([
      () => {
        throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:8090') });
      },
    ]);
    expect(await h.run(['queue', 'stats', '--consumer', 'c1'])).toBe(1);
    expect(h.out.stderr).toBe('busctl: cannot reach the portal at http://portal.test:8090/api/admin: connect ECONNREFUSED 127.0.0.1:8090\n');
  });

  it('says what a non-JSON answer was', async () => {
    const h = harness([notThePortal(() => new Response('<h1>502 Bad Gateway</h1>', { status: 502 }))]);
    expect(await h.run(['org', 'list', '--json'])).toBe(1);
    expect(h.out).toEqual({ stdout: '', stderr: 'busctl: the API answered 502: <h1>502 Bad Gateway</h1>\n' });
  });

  it('never prints the operator secret or the Authorization header, whatever happens', async () => {
    const h = harness([
      json(200, { organisations: [ORG], next_after: null }),
      apiError(401, 'admin.unauthorized', 'Operator credentials required', { 'www-authenticate': 'Basic realm="message-bus admin"' }),
      () => {
        throw new TypeError('fetch failed');
      },
    ]);
    for (const argv of [
      ['org', 'list'],
      ['org', 'list'],
      ['org', 'list'],
      ['org', 'nope'],
    ])
      await h.run(argv);
    const printed = h.out.stdout + h.out.stderr;
    expect(printed).toContain('Check BUSCTL_CLIENT_ID and BUSCTL_CLIENT_SECRET');
    expect(printed).not.toContain('operator-secret');
    expect(printed).not.toContain(BASIC.slice('Basic '.length));
  });

  describe('quarantine', () => {
    const record = (id: string, reason = 'acceptance.missing') => ({
      id,
      topic: 'bus.messages.v1',
      partition: 2,
      offset: `10${id}`,
      workspace_id: 'w1',
      message_id: `m-${id}`,
      reason,
      quarantined_at: '2026-11-22T05:00:00.000Z',
      size_bytes: 812,
    });
    const redriven = (id: string) => ({ id, outcome: 'redriven', workspace_id: 'w1', message_id: `m-${id}`, deliveries: 2 });
    const refused = (id: string) => ({ id, outcome: 'refused', workspace_id: 'w1', message_id: `m-${id}`, reason: 'acceptance.hash_mismatch' });

    it('lists a page as a table of metadata and says how to get the next one', async () => {
      const h = harness([json(200, { records: [record('7'), record('9', 'value.unreadable')], next_after: '9' })]);
      expect(await h.run(['quarantine', 'list', '--workspace', 'w1', '--limit', '2'])).toBe(0);
      expect(h.sent[0]?.url).toBe('http://portal.test:8090/api/admin/quarantine?workspace_id=w1&limit=2');
      expect(h.out.stdout).toBe(
        [
          'ID  REASON              WORKSPACE_ID  MESSAGE_ID  SIZE_BYTES  RECORD                 QUARANTINED_AT',
          '7   acceptance.missing  w1            m-7         812         bus.messages.v1/2@107  2026-11-22T05:00:00.000Z',
          '9   value.unreadable    w1            m-9         812         bus.messages.v1/2@109  2026-11-22T05:00:00.000Z',
          'More records follow: run again with --after 9.',
          '',
        ].join('\n'),
      );
    });

    it('redrives records by id and exits 0 when every one was redriven', async () => {
      const h = harness([json(200, { results: [redriven('7'), redriven('9')], next_after: null })]);
      expect(await h.run(['quarantine', 'redrive', '7', '9'])).toBe(0);
      expect(h.sent[0]).toMatchObject({ method: 'POST', url: 'http://portal.test:8090/api/admin/quarantine/redrive', body: '{"ids":["7","9"]}' });
      expect(h.out.stdout).toMatch(/^ID +OUTCOME +REASON +DELIVERIES +WORKSPACE_ID +MESSAGE_ID\n7 +redriven +- +2 +w1 +m-7\n/);
      expect(h.out.stderr).toBe('');
    });

    it('redrives a whole workspace page after page, honouring Retry-After, and exits 1 saying how many stayed', async () => {
      const h = harness([
        json(200, { results: [redriven('7'), refused('8')], next_after: '8' }),
        apiError(429, 'rate.limited', 'Slow down', { 'retry-after': '2' }),
        json(200, { results: [redriven('9')], next_after: null }),
      ]);
      expect(await h.run(['quarantine', 'redrive', '--workspace', 'w1', '--json'])).toBe(1);
      expect(h.sent.map((s) => s.body)).toEqual(['{"workspace_id":"w1"}', '{"workspace_id":"w1","after":"8"}', '{"workspace_id":"w1","after":"8"}']);
      expect(h.sleeps).toEqual([2000]);
      expect(JSON.parse(h.out.stdout)).toEqual({ results: [redriven('7'), refused('8'), redriven('9')], next_after: null });
      expect(h.out.stderr).toBe('busctl: 1 of 3 records were not redriven (refused: still quarantined, for the reason shown; not_found: not in quarantine)\n');
    });

    it('exits 1 with the refusal when a later page is refused', async () => {
      const h = harness([
        json(200, { results: [redriven('7')], next_after: '7' }),
        apiError(400, 'admin.request_invalid', 'after must be a quarantined record id'),
      ]);
      expect(await h.run(['quarantine', 'redrive', '--workspace', 'w1'])).toBe(1);
      expect(h.out.stderr).toBe('busctl: the API refused (400 admin.request_invalid): after must be a quarantined record id [request req-1]\n');
    });
  });
});
