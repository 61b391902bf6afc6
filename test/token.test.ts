import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import pino from 'pino';
import { createDatabase, type Knex } from '@bus/db';
import { createControlPublisher, IdentityAdmin } from '@bus/identity';
import { createKafka, createProducer, type Producer } from '@bus/kafka';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, msUntil, REPO_ROOT, startNodeProcess } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';

const busApi = createOpenApiChecker(openapi.bus);
/** authlib from PyPI, in a project-local venv (deploy/local/pip-venv.sh). */
const AUTHLIB_VERSION = '1.6.5';
let bus: RunningBus;
const demoFile = path.join(mkdtempSync(path.join(tmpdir(), 'bus-demo-')), 'demo.env');

async function seed(): Promise<string> {
  const proc = startNodeProcess('services/all-in-one/dist/seed.js', { ...bus.env, PORTAL_URL: bus.portalUrl, BUS_DEMO_ENV_FILE: demoFile });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`seed exited with ${code}:\n${proc.output()}`);
  return proc.output();
}

function readEnv(): Record<string, string> {
  return Object.fromEntries(
    readFileSync(demoFile, 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

beforeAll(async () => {
  bus = await startBus();
}, 60_000);
afterAll(async () => {
  await bus?.stop();
}, 30_000);

describe('the token service in the running bus, with the demo tenant', () => {
  let env: Record<string, string>;

  it('seeds the demo tenant once: prints the secrets, writes exactly the listed variables, keeps both on a rerun', async () => {
    const first = await seed();
    env = readEnv();
    expect(Object.keys(env).sort()).toEqual(
      [
        'BUS_BASE_URL',
        'PORTAL_URL',
        'BUS_WORKSPACE_ID',
        'BUS_SYSTEM_ID',
        'BUS_PRODUCER_CLIENT_ID',
        'BUS_PRODUCER_CLIENT_SECRET',
        'BUS_CONSUMER_CLIENT_ID',
        'BUS_CONSUMER_CLIENT_SECRET',
      ].sort(),
    );
    expect(env).toMatchObject({
      BUS_BASE_URL: bus.busUrl,
      PORTAL_URL: bus.portalUrl,
      BUS_WORKSPACE_ID: expect.stringMatching(/^w[a-z2-7]{12}$/),
      BUS_PRODUCER_CLIENT_ID: expect.stringMatching(/^c[a-z2-7]{12}$/),
      BUS_PRODUCER_CLIENT_SECRET: expect.stringMatching(/^sbs_/),
      BUS_CONSUMER_CLIENT_ID: expect.stringMatching(/^c[a-z2-7]{12}$/),
      BUS_CONSUMER_CLIENT_SECRET: expect.stringMatching(/^sbs_/),
    });
    expect(statSync(demoFile).mode & 0o077).toBe(0);
    expect(first).toContain(env.BUS_PRODUCER_CLIENT_SECRET);

    const before = readFileSync(demoFile, 'utf8');
    const second = await seed();
    expect(readFileSync(demoFile, 'utf8')).toBe(before);
    expect(second).not.toContain(env.BUS_PRODUCER_CLIENT_SECRET);
    expect(second).toContain(`demo tenant ${env.BUS_WORKSPACE_ID} kept`);
  }, 60_000);

  it.each(['producer', 'consumer'])('issues the %s a token through openid-client that verifies against the served key set', async (who) => {
    const prefix = `BUS_${who.toUpperCase()}_CLIENT`;
    const config = new oidc.Configuration(
      { issuer: `${bus.busUrl}/v1/oauth`, token_endpoint: `${bus.busUrl}/v1/oauth/token` },
      env[`${prefix}_ID`] as string,
      undefined,
      oidc.ClientSecretBasic(env[`${prefix}_SECRET`] as string),
    );
    oidc.allowInsecureRequests(config);
    const response = await oidc.clientCredentialsGrant(config);
    expect(response.expires_in).toBe(3600);

    const { payload, protectedHeader } = await jwtVerify(response.access_token, createRemoteJWKSet(new URL(`${bus.busUrl}/v1/oauth/jwks`)), {
      issuer: `${bus.busUrl}/v1/oauth`,
      audience: bus.busUrl,
      algorithms: ['ES256'],
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: env[`${prefix}_ID`], tenant: env.BUS_WORKSPACE_ID, environment: 'sandbox', credential_version: 1 });
  });

  it('is discoverable from its issuer alone (RFC 8414): openid-client finds the token endpoint, and the token verifies against the discovered key set', async () => {
    // The issuer is every token's iss (docs/api.md#access-token); everything else is discovered from it.
    const issuer = new URL(`${env.BUS_BASE_URL}/v1/oauth`);
    const config = await oidc.discovery(issuer, env.BUS_PRODUCER_CLIENT_ID!, undefined, oidc.ClientSecretPost(env.BUS_PRODUCER_CLIENT_SECRET!), {
      algorithm: 'oauth2',
      execute: [oidc.allowInsecureRequests],
    });
    const server = config.serverMetadata();
    expect(server).toMatchObject({
      issuer: issuer.href,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
    const response = await oidc.clientCredentialsGrant(config);
    const { payload } = await jwtVerify(response.access_token, createRemoteJWKSet(new URL(server.jwks_uri!)), {
      issuer: server.issuer,
      audience: env.BUS_BASE_URL!,
      algorithms: ['ES256'],
    });
    expect(payload.sub).toBe(env.BUS_PRODUCER_CLIENT_ID);

    // Both spellings answer the same cacheable document, as the OpenAPI document says.
    for (const where of ['/.well-known/oauth-authorization-server/v1/oauth', '/v1/oauth/.well-known/oauth-authorization-server']) {
      const res = await fetchObserved(`${bus.busUrl}${where}`);
      busApi.check('GET', where, res);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.body).toEqual(server);
    }

    // authlib (Python) checks the document against RFC 8414's requirements as well.
    const venv = execFileSync('bash', [path.join(REPO_ROOT, 'deploy/local/pip-venv.sh'), 'authlib', AUTHLIB_VERSION], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 240_000,
    }).trim();
    const validated = execFileSync(
      path.join(venv, 'bin/python'),
      [
        '-c',
        'import json, sys\nfrom authlib.oauth2.rfc8414 import AuthorizationServerMetadata\nAuthorizationServerMetadata(json.load(sys.stdin)).validate()\nprint("valid")',
      ],
      { input: JSON.stringify(server), encoding: 'utf8', timeout: 30_000 },
    );
    expect(validated.trim()).toBe('valid');
  }, 300_000);

  it('lets the demo producer publish every message type for the demo system_id (a dry run per type)', async () => {
    const res = await fetch(`${bus.busUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: env.BUS_PRODUCER_CLIENT_ID as string,
        client_secret: env.BUS_PRODUCER_CLIENT_SECRET as string,
      }),
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    for (const [type, example] of Object.entries(som.examples)) {
      const message = { ...(example as Record<string, unknown>), system_id: env.BUS_SYSTEM_ID };
      const answer = await fetch(`${bus.busUrl}/v1/tenants/${env.BUS_WORKSPACE_ID}/validate`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(message),
      });
      // Past authentication and policy: accepted, or a sequence refusal of a lone example.
      expect({ type, allowed: [202, 409].includes(answer.status) }).toEqual({ type, allowed: true });
    }
  });

  it('refuses a wrong secret with 401 invalid_client and no-store', async () => {
    const res = await fetch(`${bus.busUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: env.BUS_PRODUCER_CLIENT_ID as string, client_secret: 'sbs_nope' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
  });

  it('answers as its OpenAPI document says: token, refusals and key set', async () => {
    const basic = (secret: string) => `Basic ${Buffer.from(`${env.BUS_PRODUCER_CLIENT_ID}:${secret}`).toString('base64')}`;
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const cases: Array<[number, RequestInit]> = [
      [200, { method: 'POST', headers: { ...form, Authorization: basic(env.BUS_PRODUCER_CLIENT_SECRET as string) }, body: 'grant_type=client_credentials' }],
      [400, { method: 'POST', headers: { ...form, Authorization: basic(env.BUS_PRODUCER_CLIENT_SECRET as string) }, body: 'grant_type=password' }],
      [401, { method: 'POST', headers: { ...form, Authorization: basic('sbs_wrong') }, body: 'grant_type=client_credentials' }],
    ];
    for (const [status, init] of cases) {
      const res = await fetchObserved(`${bus.busUrl}/v1/oauth/token`, init);
      expect(res.status).toBe(status);
      busApi.check('POST', '/v1/oauth/token', res);
    }
    const jwks = await fetchObserved(`${bus.busUrl}/v1/oauth/jwks`);
    expect(jwks.status).toBe(200);
    busApi.check('GET', '/v1/oauth/jwks', jwks);
  });

  it('tags the key set, the metadata and the OpenAPI document for revalidation (304), and no token answer', async () => {
    for (const where of [
      '/v1/oauth/jwks',
      '/.well-known/oauth-authorization-server/v1/oauth',
      '/v1/oauth/.well-known/oauth-authorization-server',
      '/v1/openapi.json',
    ]) {
      const first = await fetchObserved(`${bus.busUrl}${where}`);
      busApi.check('GET', where, first);
      const etag = first.headers.get('etag');
      expect([where, etag]).toEqual([where, expect.stringMatching(/^"[A-Za-z0-9_-]{43}"$/)]);
      const again = await fetchObserved(`${bus.busUrl}${where}`, { headers: { 'If-None-Match': etag! } });
      busApi.check('GET', where, again);
      expect([where, again.status, again.body, again.headers.get('etag'), again.headers.get('cache-control')]).toEqual([
        where,
        304,
        undefined,
        etag,
        'public, max-age=300',
      ]);
      const stale = await fetchObserved(`${bus.busUrl}${where}`, { headers: { 'If-None-Match': '"an-older-answer"' } });
      expect([where, stale.status, stale.body]).toEqual([where, 200, first.body]);
    }
    // Token answers, granted or refused, are never cached nor tagged.
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const basic = (secret: string) => `Basic ${Buffer.from(`${env.BUS_PRODUCER_CLIENT_ID}:${secret}`).toString('base64')}`;
    for (const secret of [env.BUS_PRODUCER_CLIENT_SECRET as string, 'sbs_wrong']) {
      const res = await fetch(`${bus.busUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { ...form, Authorization: basic(secret) },
        body: 'grant_type=client_credentials',
      });
      expect([res.status, res.headers.get('etag'), res.headers.get('cache-control')]).toEqual([secret === 'sbs_wrong' ? 401 : 200, null, 'no-store']);
    }
  });

  it('never writes a secret or a token to the log', async () => {
    expect(bus.process.output()).not.toContain(env.BUS_PRODUCER_CLIENT_SECRET);
    expect(bus.process.output()).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
  });
});

describe('rotation and revocation reach the running gateway within 2 s (control topic)', () => {
  const logger = pino({ level: 'silent' });
  let db: Knex;
  let producer: Producer;
  let admin: IdentityAdmin;
  let workspaceId: string;
  let appId: string;

  beforeAll(async () => {
    db = createDatabase({ url: bus.env.DATABASE_URL as string, poolMax: 2, applicationName: 'e2e-token' });
    producer = createProducer(createKafka({ brokers: (bus.env.KAFKA_BROKERS as string).split(','), clientId: 'e2e-token', logger }));
    await producer.connect();
    admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
    const organisationId = await admin.createOrganisation({ name: 'E2E house', kind: 'house' });
    workspaceId = await admin.createWorkspace({ organisationId, name: 'E2E' });
    appId = await admin.createApp({ workspaceId, organisationId, name: 'E2E app' });
  });
  afterAll(async () => {
    await producer?.disconnect();
    await db?.destroy();
  });

  async function tokenOf(clientId: string, clientSecret: string): Promise<string> {
    const res = await fetch(`${bus.busUrl}/v1/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  /** A dry run of an empty object: past authentication it is a 400 schema refusal. */
  async function validate(token: string): Promise<{ status: number; rule?: string }> {
    const res = await fetch(`${bus.busUrl}/v1/tenants/${workspaceId}/validate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    const body = (await res.json()) as { violations?: Array<{ rule: string }> };
    return { status: res.status, ...(body.violations?.[0] ? { rule: body.violations[0].rule } : {}) };
  }

  it('ends the old tokens after a rotation, lets the new secret in, and ends everything after a revocation', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    const old = await tokenOf(cred.clientId, cred.clientSecret);
    expect((await validate(old)).status).not.toBe(401);

    const rotated = await admin.rotateCredential(cred.clientId, { overlapSeconds: 60 });
    const rotationMs = await msUntil(async () => (await validate(old)).rule === 'producer.unauthenticated', { what: 'the old token refused' });
    expect(rotationMs).toBeLessThanOrEqual(2_000);
    // Within the overlap the previous secret still obtains tokens, of the current version.
    const viaOld = await tokenOf(cred.clientId, cred.clientSecret);
    expect((await validate(viaOld)).status).not.toBe(401);
    const fresh = await tokenOf(rotated.clientId, rotated.clientSecret);
    expect((await validate(fresh)).status).not.toBe(401);

    await admin.revokeConnection(cred.clientId);
    const revocationMs = await msUntil(async () => (await validate(fresh)).rule === 'producer.not_registered', { what: 'the revoked connection refused' });
    expect(revocationMs).toBeLessThanOrEqual(2_000);
    process.stdout.write(`propagation through the running bus: rotation ${rotationMs} ms, revocation ${revocationMs} ms\n`);
  }, 30_000);
});
