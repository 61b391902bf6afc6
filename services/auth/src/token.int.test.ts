import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import { createDatabase, type Knex } from '@bus/db';
import { createHttpApp, createRequestMetrics, serve, violationBody, type RunningServer } from '@bus/http';
import { createControlPublisher, IdentityAdmin, type IssuedCredential } from '@bus/identity';
import { createKafka, createProducer, type Producer } from '@bus/kafka';
import { createRedis, type Redis } from '@bus/limits';
import { createMetricsRegistry } from '@bus/observability';
import { requireEnv } from '@bus/testing';
import { PRE_PUBLISH_MS, POST_RETIRE_MS } from '@bus/tokens';
import { createAuthService, type AuthServiceDeps } from './service';

const logger = pino({ level: 'silent' });
const DAY = 86_400_000;
const INTERVAL = 30 * DAY;
const OPEN = { rate: { points: 100_000, durationSeconds: 1 } };

const database = useTestDatabase({ applicationName: 'auth-test', poolMax: 5 });
let db: Knex;
let redis: Redis;
let producer: Producer;
let admin: IdentityAdmin;
let clock = Date.now();
const now = () => new Date(clock);
const encryptionKey = randomBytes(32);
const servers: RunningServer[] = [];

let producerCred: IssuedCredential;
let workspaceId: string;
let organisationId: string;
let appId: string;

async function startAuth(overrides: Partial<AuthServiceDeps> = {}) {
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const auth = createAuthService({
    metrics,
    db,
    redis,
    logger,
    baseUrl: 'http://bus.test',
    signingKeyEncryptionKey: encryptionKey,
    rotationIntervalMs: INTERVAL,
    readiness: [],
    now,
    limitPrefix: `t-${randomBytes(4).toString('hex')}`,
    limits: { perBasicClient: OPEN, perAddress: OPEN, allCallers: OPEN },
    ...overrides,
  });
  const app = createHttpApp({
    name: 'bus',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    routers: auth.routers,
    errorPages: auth.errorPage ? [auth.errorPage] : [],
  });
  const server = await serve(app, { host: '127.0.0.1', port: 0, logger });
  servers.push(server);
  return { auth, url: server.url };
}

let bus: { url: string; auth: ReturnType<typeof createAuthService> };

beforeAll(async () => {
  db = database.db;
  redis = createRedis(requireEnv('REDIS_URL'), logger);
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const kafka = createKafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'auth-test', logger });
  producer = createProducer(kafka);
  await producer.connect();
  admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger, now });
  organisationId = await admin.createOrganisation({ name: 'House', kind: 'house' });
  workspaceId = await admin.createWorkspace({ organisationId, name: 'Sandbox' });
  appId = await admin.createApp({ workspaceId, organisationId, name: 'Story app' });
  producerCred = await admin.createConnection({ appId, kind: 'producer' });
  bus = await startAuth();
  await bus.auth.signingKeys.rotate();
}, 30_000);

database.beforeDrop(async () => {
  for (const s of servers) await s.close(100);
  await producer?.disconnect();
  redis?.disconnect();
});

function basic(id: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

async function token(url: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(`${url}/v1/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...init.headers },
    body: init.body ?? 'grant_type=client_credentials',
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('POST /v1/oauth/token with an independent OAuth client (openid-client)', () => {
  function oauthClient(auth: oidc.ClientAuth) {
    const config = new oidc.Configuration(
      { issuer: 'http://bus.test/v1/oauth', token_endpoint: `${bus.url}/v1/oauth/token` },
      producerCred.clientId,
      undefined,
      auth,
    );
    oidc.allowInsecureRequests(config);
    return config;
  }

  it.each([
    ['HTTP Basic', () => oidc.ClientSecretBasic(producerCred.clientSecret)],
    ['the body', () => oidc.ClientSecretPost(producerCred.clientSecret)],
  ])('issues an ES256 token authenticated with %s, verifiable against the served key set', async (_how, auth) => {
    const response = await oidc.clientCredentialsGrant(oauthClient(auth()));
    expect(response.token_type.toLowerCase()).toBe('bearer');
    expect(response.expires_in).toBe(3600);
    expect(response.refresh_token).toBeUndefined();

    const jwks = createRemoteJWKSet(new URL(`${bus.url}/v1/oauth/jwks`));
    const { payload, protectedHeader } = await jwtVerify(response.access_token, jwks, {
      issuer: 'http://bus.test/v1/oauth',
      audience: 'http://bus.test',
      algorithms: ['ES256'],
      currentDate: now(),
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'JWT', kid: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(payload).toEqual({
      iss: 'http://bus.test/v1/oauth',
      aud: 'http://bus.test',
      sub: producerCred.clientId,
      tenant: workspaceId,
      org: organisationId,
      app: appId,
      environment: 'sandbox',
      credential_version: 1,
      iat: Math.floor(clock / 1000),
      exp: Math.floor(clock / 1000) + 3600,
      jti: expect.any(String),
    });
  });

  it('answers exactly access_token, token_type and expires_in, with Cache-Control: no-store', async () => {
    const res = await token(bus.url, { headers: { Authorization: basic(producerCred.clientId, producerCred.clientSecret) } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    const a = decodeJwt(res.body.access_token as string);
    const b = decodeJwt(
      (await token(bus.url, { headers: { Authorization: basic(producerCred.clientId, producerCred.clientSecret) } })).body.access_token as string,
    );
    expect(a.jti).not.toBe(b.jti);
  });

  it('form-decodes each part of the Basic credentials (RFC 6749 §2.3.1)', async () => {
    const escaped = Buffer.from(`${producerCred.clientId}:${producerCred.clientSecret.replace(/-/g, '%2D').replace(/_/g, '%5F')}`).toString('base64');
    const res = await token(bus.url, { headers: { Authorization: `Basic ${escaped}` } });
    expect(res.status).toBe(200);
  });

  it('allows a body client_id together with Basic when it names the same client', async () => {
    const res = await token(bus.url, {
      headers: { Authorization: basic(producerCred.clientId, producerCred.clientSecret) },
      body: form({ grant_type: 'client_credentials', client_id: producerCred.clientId }),
    });
    expect(res.status).toBe(200);
  });
});

describe('metrics', () => {
  it('counts token requests by outcome, never by client', async () => {
    const text = await (await fetch(`${bus.url}/metrics`)).text();
    expect(text).toMatch(/bus_token_requests_total\{outcome="issued"\} [1-9]/);
    expect(text).not.toContain(producerCred.clientId);
  });
});

describe('GET /v1/oauth/jwks', () => {
  it('serves the docs/api.md#resources.4 fields, cacheable for five minutes', async () => {
    const res = await fetch(`${bus.url}/v1/oauth/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const body = (await res.json()) as { keys: Array<Record<string, string>> };
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), alg: 'ES256', use: 'sig' });
    const { private_key_sealed: sealed } = (await db('signing_keys').first('private_key_sealed')) as { private_key_sealed: string };
    expect(sealed).toMatch(/^v1\./);
    expect(JSON.stringify(body)).not.toContain('"d"');
  });
});

describe('refusals (docs/api.md#errors)', () => {
  const id = () => producerCred.clientId;
  const secret = () => producerCred.clientSecret;
  const good = () => basic(id(), secret());

  it.each([
    ['a JSON body', { headers: { 'Content-Type': 'application/json' }, body: '{"grant_type":"client_credentials"}' }],
    ['a body without Content-Type', { headers: { 'Content-Type': '' }, body: 'grant_type=client_credentials' }],
    ['Basic that is not base64', { headers: { Authorization: 'Basic ***' } }],
    ['Basic without a colon', { headers: { Authorization: `Basic ${Buffer.from('nocolon').toString('base64')}` } }],
    ['Basic with a broken %-escape', { headers: { Authorization: `Basic ${Buffer.from('c%zz:x').toString('base64')}` } }],
    ['another authentication scheme', { headers: { Authorization: 'Bearer abc' } }],
    ['a repeated parameter', { body: 'grant_type=client_credentials&grant_type=client_credentials' }],
    ['no grant_type', { body: '' }],
    ['a body over 8 KiB', { body: `grant_type=client_credentials&pad=${'x'.repeat(9000)}` }],
  ])('400 invalid_request for %s', async (_what, init) => {
    const res = await token(bus.url, init);
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  it('400 invalid_request for two authentication methods, or a body client_id of another client', async () => {
    for (const body of [
      form({ grant_type: 'client_credentials', client_secret: secret() }),
      form({ grant_type: 'client_credentials', client_id: id(), client_secret: secret() }),
      form({ grant_type: 'client_credentials', client_id: 'czzzzzzzzzzzz' }),
    ]) {
      const res = await token(bus.url, { headers: { Authorization: good() }, body });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    }
  });

  it('carries no-store on refusals given before the route runs: another method, two Authorization headers', async () => {
    const get = await fetch(`${bus.url}/v1/oauth/token?grant_type=client_credentials`, { headers: { Authorization: good() } });
    expect([get.status, get.headers.get('allow'), get.headers.get('cache-control'), get.headers.get('pragma')]).toEqual([405, 'POST', 'no-store', 'no-cache']);
    expect(await get.json()).toEqual({ accepted: false, violations: [expect.objectContaining({ rule: 'method.not_allowed' })] });
    // Two header lines (fetch would join them into one): node:http sends an array as lines of their own.
    const twice = await new Promise<{ status?: number; cacheControl?: string; body: string }>((resolve, reject) => {
      const req = request(`${bus.url}/v1/oauth/token`, { method: 'POST' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode, cacheControl: res.headers['cache-control'], body }));
      });
      req.on('error', reject);
      req.setHeader('Authorization', [good(), good()]);
      req.setHeader('Content-Type', 'application/x-www-form-urlencoded');
      req.end(form({ grant_type: 'client_credentials' }));
    });
    expect([twice.status, twice.cacheControl]).toEqual([400, 'no-store']);
    expect(JSON.parse(twice.body)).toEqual({ accepted: false, violations: [expect.objectContaining({ rule: 'request.malformed' })] });
  });

  it('400 unsupported_grant_type for another grant', async () => {
    for (const grant of ['password', 'authorization_code', 'refresh_token']) {
      const res = await token(bus.url, { headers: { Authorization: good() }, body: form({ grant_type: grant }) });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    }
  });

  it('401 invalid_client without a hint, with WWW-Authenticate however the client sent its credentials', async () => {
    const cases = [
      { headers: { Authorization: basic('czzzzzzzzzzzz', secret()) } },
      { headers: { Authorization: basic(id(), `${secret()}x`) } },
      { headers: { Authorization: basic('not-a-client-id', secret()) } },
    ];
    const answers = [];
    for (const c of cases) {
      const res = await token(bus.url, c);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      answers.push(res.body);
    }
    const inBody = await token(bus.url, { body: form({ grant_type: 'client_credentials', client_id: id(), client_secret: 'sbs_wrong' }) });
    expect(inBody.status).toBe(401);
    expect(inBody.headers.get('www-authenticate')).toBe('Basic realm="bus", charset="UTF-8"');
    answers.push(inBody.body);
    for (const a of answers) expect(a).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed' });
  });

  it('401 invalid_client with no client authentication at all', async () => {
    const res = await token(bus.url);
    expect([res.status, res.body.error]).toEqual([401, 'invalid_client']);
  });

  it('401 invalid_client for a revoked or removed connection', async () => {
    for (const end of ['revoke', 'remove'] as const) {
      const cred = await admin.createConnection({ appId, kind: 'consumer' });
      expect((await token(bus.url, { headers: { Authorization: basic(cred.clientId, cred.clientSecret) } })).status).toBe(200);
      if (end === 'revoke') await admin.revokeConnection(cred.clientId);
      else await admin.removeConnection(cred.clientId);
      const res = await token(bus.url, { headers: { Authorization: basic(cred.clientId, cred.clientSecret) } });
      expect([res.status, res.body.error]).toEqual([401, 'invalid_client']);
    }
  });

  it('503 temporarily_unavailable when Postgres cannot be reached', async () => {
    const deadDb = createDatabase({ url: 'postgres://bus:bus@127.0.0.1:1/bus', poolMax: 1, applicationName: 'dead' });
    // knex prints each refused connection with console.log; the answer below is what matters.
    const quiet = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const dead = await startAuth({ db: deadDb });
      const res = await token(dead.url, { headers: { Authorization: good() } });
      expect(res.status).toBe(503);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    } finally {
      await deadDb.destroy();
      quiet.mockRestore();
    }
  });

  it('503 temporarily_unavailable when the token cannot be signed (signing keys sealed under another key)', async () => {
    const other = await startAuth({ signingKeyEncryptionKey: randomBytes(32) });
    const res = await token(other.url, { headers: { Authorization: good() } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
  });
});

describe('credential rotation', () => {
  it('gives the new version at once and lets the previous secret work until its overlap ends, not after', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    const rotatedAt = clock;
    const rotated = await admin.rotateCredential(cred.clientId, { overlapSeconds: 60 });
    expect(rotated.credentialVersion).toBe(2);
    try {
      clock = rotatedAt + 60_000 - 1;
      const old = await token(bus.url, { headers: { Authorization: basic(cred.clientId, cred.clientSecret) } });
      expect(old.status).toBe(200);
      // The previous secret obtains tokens of the current version: an older one would be refused.
      expect(decodeJwt(old.body.access_token as string).credential_version).toBe(2);

      clock = rotatedAt + 60_000;
      const after = await token(bus.url, { headers: { Authorization: basic(cred.clientId, cred.clientSecret) } });
      expect([after.status, after.body.error]).toEqual([401, 'invalid_client']);
      const fresh = await token(bus.url, { headers: { Authorization: basic(rotated.clientId, rotated.clientSecret) } });
      expect(fresh.status).toBe(200);
      expect(decodeJwt(fresh.body.access_token as string).credential_version).toBe(2);
    } finally {
      clock = rotatedAt;
    }
  });

  it('with no overlap, ends the previous secret at once', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    await admin.rotateCredential(cred.clientId, { overlapSeconds: 0 });
    const res = await token(bus.url, { headers: { Authorization: basic(cred.clientId, cred.clientSecret) } });
    expect(res.status).toBe(401);
  });
});

describe('signing-key rotation', () => {
  it('publishes the next key before it signs and keeps the old one while its tokens live', async () => {
    const start = clock;
    const kidOf = async () =>
      decodeProtectedHeader(
        (await token(bus.url, { headers: { Authorization: basic(producerCred.clientId, producerCred.clientSecret) } })).body.access_token as string,
      ).kid;
    const published = async () => ((await (await fetch(`${bus.url}/v1/oauth/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    try {
      const first = await kidOf();
      clock = start + INTERVAL - PRE_PUBLISH_MS;
      await bus.auth.signingKeys.rotate();
      const keys = await published();
      expect(keys).toHaveLength(2);
      expect(await kidOf()).toBe(first);
      const second = keys.find((k) => k !== first);

      clock = start + INTERVAL - PRE_PUBLISH_MS + PRE_PUBLISH_MS;
      await bus.auth.signingKeys.rotate();
      expect(await kidOf()).toBe(second);
      expect(await published()).toEqual([first, second]);

      clock = start + INTERVAL + POST_RETIRE_MS;
      await bus.auth.signingKeys.rotate();
      expect(await published()).toEqual([second]);
    } finally {
      clock = start;
    }
  });
});

describe('token URL limits (docs/api.md#limits) with the real windows', () => {
  async function burst(url: string, n: number, init: () => { headers?: Record<string, string>; body?: string }) {
    const answers = [];
    for (let i = 0; i < n; i++) answers.push(await token(url, init()));
    return answers;
  }

  function expectRateLimited(res: Awaited<ReturnType<typeof token>>) {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ accepted: false, violations: [{ source: 'policy', rule: 'rate.limited', message: expect.any(String) }] });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get('cache-control')).toBe('no-store');
  }

  it('allows 30 requests in 5 minutes per client using HTTP Basic, then 429 for that client only', async () => {
    const { url } = await startAuth({ limits: { perAddress: OPEN, allCallers: OPEN } });
    const answers = await burst(url, 31, () => ({ headers: { Authorization: basic(producerCred.clientId, producerCred.clientSecret) } }));
    expect(answers.slice(0, 30).every((a) => a.status === 200)).toBe(true);
    expectRateLimited(answers[30] as (typeof answers)[number]);
    expect(Number(answers[30]?.headers.get('retry-after'))).toBeLessThanOrEqual(300);
    // Body authentication is limited by address and in total, not per client.
    const inBody = await token(url, {
      body: form({ grant_type: 'client_credentials', client_id: producerCred.clientId, client_secret: producerCred.clientSecret }),
    });
    expect(inBody.status).toBe(200);
  });

  it('allows 100 requests in 5 minutes per source address, then 429', async () => {
    const { url } = await startAuth({ limits: { allCallers: OPEN } });
    // Unknown clients: refusals count too, which is the point of an address limit.
    const answers = await burst(url, 101, () => ({ body: form({ grant_type: 'client_credentials', client_id: 'czzzzzzzzzzzz', client_secret: 'sbs_x' }) }));
    expect(answers.slice(0, 100).map((a) => a.status)).toEqual(Array(100).fill(401));
    expectRateLimited(answers[100] as (typeof answers)[number]);
  }, 20_000);

  it('allows all callers together 20 a second with bursts of 40, then 429', async () => {
    const { url } = await startAuth({ limits: { perBasicClient: OPEN, perAddress: OPEN } });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 45 }, () => token(url, { body: form({ grant_type: 'client_credentials', client_id: 'czzzzzzzzzzzz', client_secret: 'sbs_x' }) })),
    );
    // The 1 s window of the rate starts with the first request; the test is only meaningful inside it.
    if (Date.now() - started < 900) {
      expect(answers.filter((a) => a.status === 401)).toHaveLength(40);
      const limited = answers.filter((a) => a.status === 429);
      expect(limited).toHaveLength(5);
      for (const a of limited) expectRateLimited(a);
    }
  });
});
