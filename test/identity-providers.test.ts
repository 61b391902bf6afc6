import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { OAuth2Server } from 'oauth2-mock-server';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, freePort, withClient } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { signedHeaders, type Credentials } from './support/principals';

/**
 * External identity providers and operator-managed apps on the compiled all-in-one:
 * tokens come from a local issuer this test starts on 127.0.0.1 with keys it generates (jose), and
 * from oauth2-mock-server through openid-client's client-credentials grant (the token-URL flow of
 * POST /v1/jwt/messages); POST /v1/messages is signed by AWS's own signer (@smithy/signature-v4).
 * Every answer is checked against the OpenAPI documents.
 */

const adminApi = createOpenApiChecker(openapi.admin);
const busApi = createOpenApiChecker(openapi.bus);
const SYSTEM_ID = 'storyteller.web';
const AUDIENCE = 'message-bus-test';
/** The issue's goal for a removal to reach every process. */
const PROPAGATION_GOAL_MS = 2_000;

let bus: RunningBus;
let operatorAuth: string;
let issuer: LocalIssuer;
let tenant: Awaited<ReturnType<typeof house>>;
let providerId: string;

/** An OAuth issuer of the test's own: a key pair it generates and a JWKS server on 127.0.0.1. */
interface LocalIssuer {
  url: string;
  jwksUrl: string;
  /** The key that signs now; `rotate` makes a new one (a new kid) and publishes both. */
  current: SigningKey;
  rotate(): Promise<void>;
  stop(): Promise<void>;
}

type SigningKey = Awaited<ReturnType<typeof signingKey>>;

async function signingKey() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

async function startLocalIssuer(): Promise<LocalIssuer> {
  const keys = [await signingKey()];
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    jwksUrl: `${url}/jwks`,
    get current() {
      return keys[keys.length - 1] as SigningKey;
    },
    rotate: async () => {
      keys.push(await signingKey());
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A token of the local issuer for `client` (azp), valid for five minutes unless `claims` says otherwise. */
function issue(client: string, claims: Record<string, unknown> = {}, opts: { iss?: string; alg?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ azp: client, sub: `svc-${client}`, ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: issuer.current.kid, typ: 'JWT' })
    .setIssuer(opts.iss ?? issuer.url)
    .setAudience((claims.aud as string | undefined) ?? AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime((claims.exp as number | undefined) ?? now + 300)
    .sign(issuer.current.privateKey);
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

async function admin(method: string, path: string, body?: unknown) {
  const response = await fetchObserved(`${bus.portalUrl}${path}`, {
    method,
    headers: { Authorization: operatorAuth, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  adminApi.check(method, path, response);
  return response;
}

async function created<T>(path: string, body: unknown): Promise<T> {
  const res = await admin('POST', path, body);
  expect(res.status).toBe(201);
  return res.body as T;
}

function message(type = 'telling.started') {
  return {
    ...(som.examples[type] as Record<string, unknown>),
    message_id: randomUUID(),
    correlation_id: `c-${randomUUID()}`,
    occurred_at: new Date().toISOString(),
  };
}

const publish = (token: string, path = `/v1/tenants/${tenant.workspaceId}/messages`, body: unknown = message()) => bearerCall(bus, 'POST', path, token, body);
const firstRule = (body: unknown) => (body as { violations?: Array<{ rule: string }> }).violations?.[0]?.rule;

async function house() {
  const organisation = await created<{ id: string }>('/api/admin/organisations', { name: 'House', kind: 'house', quota: { tier: 'high' } });
  const workspace = await created<{ id: string }>('/api/admin/workspaces', { organisation_id: organisation.id, name: 'Stories' });
  const app = await created<{ id: string }>('/api/admin/apps', { workspace_id: workspace.id, name: 'Studio' });
  expect((await admin('PUT', `/api/admin/apps/${app.id}/permissions`, { system_ids: [SYSTEM_ID], message_types: ['telling.started'] })).status).toBe(200);
  const producer = await created<{ client_id: string }>('/api/admin/connections', { app_id: app.id, kind: 'producer' });
  return { organisationId: organisation.id, workspaceId: workspace.id, appId: app.id, producerId: producer.client_id };
}

beforeAll(async () => {
  issuer = await startLocalIssuer();
  bus = await startBus({ IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: 'true' });
  operatorAuth = basic(bus.env.OPERATOR_CLIENT_ID!, bus.env.OPERATOR_CLIENT_SECRET!);
  tenant = await house();
  const provider = await created<{ id: string }>('/api/admin/identity-providers', {
    issuer: issuer.url,
    jwks_url: issuer.jwksUrl,
    audiences: [AUDIENCE],
    client_claim: 'azp',
  });
  providerId = provider.id;
  await created(`/api/admin/identity-providers/${providerId}/bindings`, { client: 'studio', connection_id: tenant.producerId });
}, 180_000);
afterAll(async () => {
  await bus?.stop();
  await issuer?.stop();
}, 30_000);

describe('a bound identity provider', () => {
  it('publishes and validates with its tokens exactly as with bus tokens', async () => {
    const token = await issue('studio');
    const published = await publish(token);
    expect(published.status).toBe(202);
    expect(published.body).toMatchObject({ accepted: true, message_type: 'telling.started' });
    const validated = await publish(token, `/v1/tenants/${tenant.workspaceId}/validate`);
    expect(validated.status).toBe(202);
    expect(validated.body).toMatchObject({ accepted: true, dry_run: true });
    // Rule 5: the bound connection's app permissions apply.
    expect(firstRule((await publish(token, undefined, message('telling.ended'))).body)).toBe('policy.message_type_not_allowed');
  });

  it('shows the provider with its defaults and refuses HS*, none and an http JWKS URL off loopback at registration', async () => {
    const listed = await admin('GET', '/api/admin/identity-providers');
    expect(listed.status).toBe(200);
    expect((listed.body as { identity_providers: unknown[] }).identity_providers).toContainEqual(
      expect.objectContaining({ id: providerId, algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'], clock_tolerance_seconds: 60, client_claim: 'azp' }),
    );
    for (const refused of [{ algorithms: ['HS256'] }, { algorithms: ['none'] }, { jwks_url: 'http://idp.example/jwks' }, { issuer: issuer.url }]) {
      const res = await admin('POST', '/api/admin/identity-providers', {
        issuer: `https://idp-${randomUUID()}.example`,
        jwks_url: 'https://idp.example/jwks',
        audiences: [AUDIENCE],
        client_claim: 'azp',
        ...refused,
      });
      expect([400, 409]).toContain(res.status);
    }
  });

  it.each([
    ['an unregistered issuer', () => issue('studio', {}, { iss: 'https://elsewhere.example' })],
    ['another audience', () => issue('studio', { aud: 'someone-else' })],
    ['expiry beyond the clock tolerance', () => issue('studio', { exp: Math.floor(Date.now() / 1000) - 120 })],
    [
      'alg none',
      async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: issuer.url, aud: AUDIENCE, azp: 'studio', exp: Math.floor(Date.now() / 1000) + 300 })}.`,
    ],
    ["HS256 signed with the provider's public key", () => hsWithPublicKey()],
    ['a tampered payload', async () => tamper(await issue('studio'))],
    // Hostile input never reaches the registry: a NUL would fail Postgres's read (a 503, not a 401).
    ['an issuer with a NUL in it', async () => `${b64({ alg: 'RS256', kid: 'k' })}.${b64({ iss: 'https://idp.example/\u0000', azp: 'studio' })}.c2ln`],
  ])('refuses %s: 401 producer.unauthenticated', async (_what, token) => {
    const res = await publish(await token());
    expect(res.status).toBe(401);
    expect(firstRule(res.body)).toBe('producer.unauthenticated');
  });

  it('accepts a token expired within the clock tolerance (60 s)', async () => {
    const res = await publish(await issue('studio', { exp: Math.floor(Date.now() / 1000) - 20 }));
    expect(res.status).toBe(202);
  });

  it("refuses an unbound client 403 producer.not_registered, and another workspace's path 403 tenant.mismatch", async () => {
    const unbound = await publish(await issue('stranger'));
    expect(unbound.status).toBe(403);
    expect(firstRule(unbound.body)).toBe('producer.not_registered');
    const other = await publish(await issue('studio'), '/v1/tenants/wabcdefghijk2/messages');
    expect(other.status).toBe(403);
    expect(firstRule(other.body)).toBe('tenant.mismatch');
  });

  it('keeps working across a key rotation at the provider (a new kid is fetched on first sight)', async () => {
    expect((await publish(await issue('studio'))).status).toBe(202);
    await issuer.rotate();
    const token = await issue('studio');
    // The key set was fetched moments ago: a refetch for the unknown kid waits for the 5 s cooldown at most.
    const res = await eventually(
      () => publish(token, undefined, message()),
      (r) => r.status === 202,
      { timeoutMs: 10_000, intervalMs: 500, what: 'the new kid accepted' },
    );
    expect(res.status).toBe(202);
  }, 15_000);

  it("answers 503 identity.provider_unavailable with Retry-After when the provider's JWKS is unreachable, at once", async () => {
    const closedPort = await freePort();
    const down = `http://127.0.0.1:${closedPort}`;
    const provider = await created<{ id: string }>('/api/admin/identity-providers', {
      issuer: down,
      jwks_url: `${down}/jwks`,
      audiences: [AUDIENCE],
      client_claim: 'azp',
    });
    await created(`/api/admin/identity-providers/${provider.id}/bindings`, { client: 'studio', connection_id: tenant.producerId });
    const started = Date.now();
    const res = await publish(await issue('studio', {}, { iss: down }));
    expect(res.status).toBe(503);
    expect(firstRule(res.body)).toBe('identity.provider_unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(4_000);
    // The warning reaches the child's stdout pipe a moment after the answer may.
    await eventually(
      () => bus.process.output(),
      (output) => /IdentityProviderUnavailableError/.test(output),
      { timeoutMs: 5_000, what: 'the outage logged with its cause' },
    );
  });

  it("lists a provider's bindings a page at a time and binds a connection 10 times at most", async () => {
    const issued = await created<{ client_id: string }>('/api/admin/connections', { app_id: tenant.appId, kind: 'producer' });
    for (let n = 0; n < 10; n += 1)
      await created(`/api/admin/identity-providers/${providerId}/bindings`, { client: `page-${n}`, connection_id: issued.client_id });
    const eleventh = await admin('POST', `/api/admin/identity-providers/${providerId}/bindings`, { client: 'page-10', connection_id: issued.client_id });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body).toMatchObject({ code: 'admin.conflict', message: 'a connection holds at most 10 identity provider bindings: remove one first' });

    const path = `/api/admin/identity-providers/${providerId}/bindings`;
    const whole = (await admin('GET', `${path}?limit=500`)).body as { bindings: Array<{ id: string; client: string }>; next_after: string | null };
    expect(whole.next_after).toBeNull();
    expect(whole.bindings.map((b) => b.client)).toEqual(expect.arrayContaining(['studio', ...Array.from({ length: 10 }, (_, n) => `page-${n}`)]));
    const paged: string[] = [];
    let after: string | null = null;
    do {
      const res = await admin('GET', `${path}?limit=3${after === null ? '' : `&after=${after}`}`);
      expect(res.status).toBe(200);
      const page = res.body as typeof whole;
      expect(page.bindings.length).toBeLessThanOrEqual(3);
      paged.push(...page.bindings.map((b) => b.id));
      after = page.next_after;
    } while (after !== null);
    expect(paged).toEqual(whole.bindings.map((b) => b.id));

    const unknown = await admin('GET', `${path}?after=bzzzzzzzzzzzz`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: 'admin.request_invalid', message: 'after: nothing listed has that id' });
    expect((await admin('GET', `${path}?limit=501`)).status).toBe(400);
  });

  it('stops accepting within 2 s once the binding, then the provider, is removed', async () => {
    const issued = await created<{ client_id: string }>('/api/admin/connections', { app_id: tenant.appId, kind: 'producer' });
    const binding = await created<{ id: string }>(`/api/admin/identity-providers/${providerId}/bindings`, {
      client: 'short-lived',
      connection_id: issued.client_id,
    });
    const token = await issue('short-lived');
    expect((await publish(token)).status).toBe(202);

    let removedAt = Date.now();
    expect((await admin('DELETE', `/api/admin/identity-providers/${providerId}/bindings/${binding.id}`)).status).toBe(204);
    await eventually(
      () => publish(token),
      (r) => r.status === 403,
      { timeoutMs: PROPAGATION_GOAL_MS, intervalMs: 100, what: 'the binding removal applied' },
    );
    expect(Date.now() - removedAt).toBeLessThan(PROPAGATION_GOAL_MS);
    // The audit entries of the binding's create and removal name the organisation of its connection,
    // so that organisation's admins read them (written once each answer has gone).
    const bindingPath = `/api/admin/identity-providers/${providerId}/bindings`;
    const audited = await eventually(
      () =>
        withClient(bus.env.DATABASE_URL!, async (client) => {
          const entries = await client.query<{ action: string; organisation_id: string | null }>(
            'select action, organisation_id from audit_log where target = $1 or target = $2 order by id',
            [binding.id, `${bindingPath}/${binding.id}`],
          );
          return entries.rows;
        }),
      (rows) => rows.length === 2,
      { what: "the audit entries of the binding's create and removal" },
    );
    expect(audited).toEqual([
      { action: `POST ${bindingPath}`, organisation_id: tenant.organisationId },
      { action: `DELETE ${bindingPath}/${binding.id}`, organisation_id: tenant.organisationId },
    ]);

    const studio = await issue('studio');
    expect((await publish(studio)).status).toBe(202);
    removedAt = Date.now();
    expect((await admin('DELETE', `/api/admin/identity-providers/${providerId}`)).status).toBe(204);
    const refused = await eventually(
      () => publish(studio),
      (r) => r.status === 401,
      { timeoutMs: PROPAGATION_GOAL_MS, intervalMs: 100, what: 'the provider removal applied' },
    );
    expect(firstRule(refused.body)).toBe('producer.unauthenticated');
    expect(Date.now() - removedAt).toBeLessThan(PROPAGATION_GOAL_MS);
    expect((await admin('GET', `/api/admin/identity-providers/${providerId}`)).status).toBe(404);
  });
});

/** The managed AWS entry's key; the secret is in a file, as the chart mounts it from a Secret. */
const MANAGED_KEY = { accessKeyId: 'AKIAMANAGEDTEST00001', secretAccessKey: `managed-${randomUUID()}` };

describe('operator-managed apps: POST /v1/jwt/messages and POST /v1/messages', () => {
  let tokenServer: OAuth2Server;
  let managed: { workspaceId: string; appId: string; producerId: string };

  beforeAll(async () => {
    tokenServer = new OAuth2Server();
    // keys.add rather than keys.generate: the key node:crypto exports comes from another realm than
    // jest's sandbox, which the mock's plain-object check refuses; add copies it first.
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    await tokenServer.issuer.keys.add({ ...(await exportJWK(privateKey)), alg: 'RS256', kid: randomUUID() });
    await tokenServer.start(await freePort(), '127.0.0.1');
    // A real provider names the client in its access tokens; the mock's client-credentials tokens
    // carry only aud and scope, so it is told to add client_id, as Okta or Keycloak do.
    tokenServer.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }, req: { headers: Record<string, string | undefined> }) => {
      const basicAuth = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (basicAuth) token.payload.client_id = decodeURIComponent(Buffer.from(basicAuth, 'base64').toString().split(':')[0] as string);
    });
    managed = await house();
    // An entry whose connection belongs to another house's app: a configuration mistake the bus can
    // only see at a request, when it reads the connection.
    const elsewhere = await house();
    const file = join(tmpdir(), `managed-apps-${randomUUID()}.yaml`);
    const secretFile = join(tmpdir(), `managed-secret-${randomUUID()}`);
    writeFileSync(secretFile, MANAGED_KEY.secretAccessKey);
    writeFileSync(
      file,
      [
        'apps:',
        '  - name: newsroom-feed',
        `    workspace_id: ${managed.workspaceId}`,
        `    app_id: ${managed.appId}`,
        `    connection_id: ${managed.producerId}`,
        '    token_issuer:',
        `      issuer: ${tokenServer.issuer.url}`,
        `      jwks_url: ${tokenServer.issuer.url}/jwks`,
        `      audience: ${AUDIENCE}`,
        '      client_claim: client_id',
        '      client_id: newsroom',
        '  - name: misfiled-feed',
        `    workspace_id: ${managed.workspaceId}`,
        `    app_id: ${managed.appId}`,
        `    connection_id: ${elsewhere.producerId}`,
        '    token_issuer:',
        `      issuer: ${tokenServer.issuer.url}`,
        `      jwks_url: ${tokenServer.issuer.url}/jwks`,
        `      audience: ${AUDIENCE}`,
        '      client_claim: client_id',
        '      client_id: misfiled',
        '  - name: archive-sync',
        `    workspace_id: ${managed.workspaceId}`,
        `    app_id: ${managed.appId}`,
        `    connection_id: ${managed.producerId}`,
        '    aws:',
        '      role_arn: arn:aws:iam::123456789012:role/archive-sync',
        `      access_key_id: ${MANAGED_KEY.accessKeyId}`,
        `      secret_access_key_file: ${secretFile}`,
        '',
      ].join('\n'),
    );
    await bus.process.stop();
    bus.env.MANAGED_APPS_FILE = file;
    await bus.restart();
  }, 120_000);
  afterAll(async () => {
    await tokenServer?.stop();
  });

  async function tokenFor(clientId: string): Promise<string> {
    const config = new oidc.Configuration(
      { issuer: tokenServer.issuer.url as string, token_endpoint: `${tokenServer.issuer.url}/token` },
      clientId,
      undefined,
      oidc.ClientSecretBasic('any-secret'),
    );
    oidc.allowInsecureRequests(config);
    return (await oidc.clientCredentialsGrant(config, { aud: AUDIENCE })).access_token;
  }

  it("publishes for the configured app in the configured workspace, with the app's permissions", async () => {
    const token = await tokenFor('newsroom');
    const res = await publish(token, '/v1/jwt/messages');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: true, message_type: 'telling.started' });
    const again = await publish(token, '/v1/jwt/messages', message('telling.ended'));
    expect(firstRule(again.body)).toBe('policy.message_type_not_allowed');
  });

  it('refuses a client no entry names and an entry whose connection is not its app’s (403), and tokens of other issuers, the bus included (401)', async () => {
    const stranger = await publish(await tokenFor('someone-else'), '/v1/jwt/messages');
    expect(stranger.status).toBe(403);
    expect(firstRule(stranger.body)).toBe('producer.not_registered');
    expect(JSON.stringify(stranger.body)).toContain("No operator-managed app of the token's issuer names its client");
    const misfiled = await publish(await tokenFor('misfiled'), '/v1/jwt/messages');
    expect(misfiled.status).toBe(403);
    expect(JSON.stringify(misfiled.body)).toContain("The operator-managed app's configured connection is not a producer of its configured app and workspace");
    const local = await publish(await issue('studio'), '/v1/jwt/messages');
    expect(local.status).toBe(401);
    expect(firstRule(local.body)).toBe('producer.unauthenticated');
  });

  /** POST /v1/messages signed as a client would with the SDK (the bus's default region, us-east-1); `headers` sends a signed request again. */
  async function signedPublish(credentials: Credentials, body: string, headers?: Record<string, string>) {
    const sent = headers ?? (await signedHeaders(bus, credentials, '/v1/messages', body, { region: 'us-east-1' }));
    const response = await fetchObserved(`${bus.busUrl}/v1/messages`, { method: 'POST', headers: sent, body });
    busApi.check('POST', '/v1/messages', response);
    return { response, headers: sent };
  }

  it("publishes a message signed with the entry's access key as the configured app, in its workspace", async () => {
    const body = message();
    const { response } = await signedPublish(MANAGED_KEY, JSON.stringify(body));
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ accepted: true, message_id: body.message_id, message_type: 'telling.started' });
    const trace = await admin('GET', `/api/admin/workspaces/${managed.workspaceId}/messages/${body.message_id}`);
    expect(trace.status).toBe(200);
    expect(trace.body).toMatchObject({ producer_connection_id: managed.producerId });
    // The app's permissions apply: it may not publish telling.ended.
    const refused = await signedPublish(MANAGED_KEY, JSON.stringify(message('telling.ended')));
    expect(refused.response.status).toBe(403);
    expect(firstRule(refused.response.body)).toBe('policy.message_type_not_allowed');
  });

  it('refuses a key no entry has and a wrong secret with 401 producer.unauthenticated; the same signed request twice is a duplicate', async () => {
    const body = JSON.stringify(message());
    const unknown = await signedPublish({ ...MANAGED_KEY, accessKeyId: 'AKIANOSUCHKEY0000001' }, body);
    const wrong = await signedPublish({ ...MANAGED_KEY, secretAccessKey: 'not-the-configured-secret' }, body);
    for (const { response } of [unknown, wrong]) {
      expect(response.status).toBe(401);
      expect(firstRule(response.body)).toBe('producer.unauthenticated');
    }
    // A repeated signature is accepted, as AWS does (docs/auth.md): the publish is idempotent by message_id.
    const first = await signedPublish(MANAGED_KEY, body);
    expect(first.response.status).toBe(202);
    const repeated = await signedPublish(MANAGED_KEY, body, first.headers);
    expect(repeated.response.status).toBe(200);
    expect(repeated.response.body).toMatchObject({ accepted: true, duplicate: true });
  });
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The classic key-confusion forgery: HS256 with the provider's public key (its JWK) as the HMAC secret. */
async function hsWithPublicKey(): Promise<string> {
  const secret = new TextEncoder().encode(JSON.stringify(issuer.current.publicJwk));
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ azp: 'studio' })
    .setProtectedHeader({ alg: 'HS256', kid: issuer.current.kid, typ: 'JWT' })
    .setIssuer(issuer.url)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(secret);
}

function tamper(token: string): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64({ iss: issuer.url, aud: AUDIENCE, azp: 'studio', exp: Math.floor(Date.now() / 1000) + 300, admin: true })}.${signature}`;
}
