import { createHmac, randomBytes, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { Router } from 'express';
import pino from 'pino';
import { useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { createHttpApp, createRequestMetrics, serve, violationBody, type RunningServer } from '@bus/http';
import { createKafka, createProducer, type Kafka, type Producer } from '@bus/kafka';
import { createMetricsRegistry } from '@bus/observability';
import { eventually, msUntil, requireEnv } from '@bus/testing';
import {
  audienceFor,
  buildClaims,
  encryptPrivateKey,
  generateSigningKey,
  signAccessToken,
  type AccessTokenClaims,
  type GeneratedSigningKey,
} from '@bus/tokens';
import {
  createControlListener,
  createControlPublisher,
  createIdentity,
  IdentityAdmin,
  KnexIdentityStore,
  ConnectionCache,
  type Identity,
  type IssuedCredential,
} from './index';

const logger = pino({ level: 'silent' });
const BASE = 'http://bus.test';
const audience = audienceFor(BASE);
const PROPAGATION_GOAL_MS = 2_000;

const database = useTestDatabase({ applicationName: 'identity-test', poolMax: 5 });
let db: Knex;
let kafka: Kafka;
let producer: Producer;
let admin: IdentityAdmin;
let key: GeneratedSigningKey;
let server: RunningServer;
const identities: Identity[] = [];
let workspaceId: string;
let organisationId: string;
let appId: string;
let producerCred: IssuedCredential;
let consumerCred: IssuedCredential;

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

function claimsFor(cred: IssuedCredential, overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims {
  return {
    ...buildClaims({ audience, clientId: cred.clientId, workspaceId, organisationId, appId, credentialVersion: cred.credentialVersion, now: new Date() }),
    ...overrides,
  };
}
const tokenFor = (cred: IssuedCredential, overrides: Partial<AccessTokenClaims> = {}) => signAccessToken(claimsFor(cred, overrides), key);

function es256(header: Record<string, unknown>, payload: unknown, privateKey: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${cryptoSign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/**
 * An identity whose control-topic listener reads: start() gives up waiting after its join timeout (a
 * fresh broker takes longer to set up its group coordinator), so wait for the control-topic check as
 * a deployment's readiness probe would.
 */
async function startIdentity(name: string): Promise<Identity> {
  const identity = createIdentity({ db, kafka, logger, baseUrl: BASE, cacheTtlMs: 30_000, name });
  await identity.service.start?.();
  identities.push(identity);
  await eventually(
    () => identity.controlReadiness.check(),
    () => true,
    { timeoutMs: 60_000, intervalMs: 100, what: `identity ${name} reading the control topic` },
  );
  return identity;
}

beforeAll(async () => {
  db = database.db;
  kafka = createKafka({ brokers: requireEnv('KAFKA_BROKERS').split(','), clientId: 'identity-test', logger });
  producer = createProducer(kafka);
  await producer.connect();
  admin = IdentityAdmin.create({ db, control: createControlPublisher(producer), logger });
  organisationId = await admin.createOrganisation({ name: 'House', kind: 'house' });
  workspaceId = await admin.createWorkspace({ organisationId, name: 'Sandbox' });
  appId = await admin.createApp({ workspaceId, organisationId, name: 'Story app' });
  producerCred = await admin.createConnection({ appId, kind: 'producer' });
  consumerCred = await admin.createConnection({ appId, kind: 'consumer' });
  // A published signing key, as the token service stores it.
  key = generateSigningKey();
  await db('signing_keys').insert({
    kid: key.kid,
    public_jwk: JSON.stringify(key.publicJwk),
    private_key_sealed: encryptPrivateKey(key.privateKey, key.kid, randomBytes(32)),
    created_at: new Date(Date.now() - 60_000),
    activates_at: new Date(Date.now() - 60_000),
  });

  // One bearer route of each kind, as the gateway and the pull API will mount them.
  const identity = await startIdentity('http');
  const router = Router();
  router.post('/v1/tenants/:t/messages', identity.authenticateBearer({ kind: 'producer' }), (_req, res) => {
    res.status(202).json({ accepted: true, who: res.locals.identity.clientId });
  });
  router.get('/v1/tenants/:t/consumers/:c/messages', identity.authenticateBearer({ kind: 'consumer' }), (_req, res) => {
    res.json({ messages: [] });
  });
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const app = createHttpApp({
    name: 'bus',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    routers: [router],
  });
  server = await serve(app, { host: '127.0.0.1', port: 0, logger });
}, 120_000);

database.beforeDrop(async () => {
  await server?.close(100);
  await Promise.all(identities.map((i) => i.service.stop?.()));
  await producer?.disconnect();
});

async function publish(token: string | undefined, tenant = workspaceId) {
  const res = await fetch(`${server.url}/v1/tenants/${tenant}/messages`, {
    method: 'POST',
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
  });
  const body = (await res.json()) as { violations?: Array<{ rule: string }> };
  return { status: res.status, rule: body.violations?.[0]?.rule, body, challenge: res.headers.get('www-authenticate') };
}

describe('authenticateBearer on a route (docs/api.md#authentication rules 1–4)', () => {
  it('lets an active producer with a valid token through', async () => {
    expect(await publish(await tokenFor(producerCred))).toMatchObject({ status: 202, body: { accepted: true, who: producerCred.clientId } });
  });

  it('answers 401 producer.unauthenticated in the bus shape with a Bearer challenge, an error code only when a bearer token was sent', async () => {
    const res = await publish(undefined);
    expect(res.status).toBe(401);
    expect(res.challenge).toBe('Bearer realm="bus"');
    expect(res.body).toEqual({ accepted: false, violations: [{ source: 'policy', rule: 'producer.unauthenticated', message: 'A bearer token is required' }] });
    // Another scheme carries no bearer credentials either (RFC 6750 §3.1: no error code then).
    const basic = await fetch(`${server.url}/v1/tenants/${workspaceId}/messages`, { method: 'POST', headers: { Authorization: 'Basic YTpi' } });
    expect([basic.status, basic.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="bus"']);
    await basic.body?.cancel();
    for (const token of ['not-a-jwt', '!!']) {
      const bad = await publish(token);
      expect([bad.status, bad.challenge]).toEqual([401, 'Bearer realm="bus", error="invalid_token"']);
    }
  });

  it('refuses every forged, foreign or stale token with 401 producer.unauthenticated', async () => {
    const valid = await tokenFor(producerCred);
    const [header, payload] = valid.split('.') as [string, string, string];
    const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const hsInput = `${b64({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${b64(claimsFor(producerCred))}`;
    const cases: Record<string, string> = {
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      'HS256 signed with the public key': `${hsInput}.${createHmac('sha256', JSON.stringify(key.publicJwk)).update(hsInput).digest('base64url')}`,
      'unknown kid': await signAccessToken(claimsFor(producerCred), generateSigningKey()),
      'embedded jwk': es256(
        { alg: 'ES256', typ: 'JWT', kid: key.kid, jwk: attacker.publicKey.export({ format: 'jwk' }) },
        claimsFor(producerCred),
        attacker.privateKey,
      ),
      jku: es256({ alg: 'ES256', typ: 'JWT', kid: key.kid, jku: 'https://evil.example/jwks' }, claimsFor(producerCred), attacker.privateKey),
      'r = s = 0 signature': `${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`,
      expired: await tokenFor(producerCred, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }),
      'wrong aud': await tokenFor(producerCred, { aud: 'http://preview.test' }),
      'wrong iss': await tokenFor(producerCred, { iss: 'http://preview.test/v1/oauth' }),
      'wrong environment': await tokenFor(producerCred, { environment: 'preview' }),
      'tampered claims': `${header}.${b64(claimsFor(producerCred, { tenant: 'wzzzzzzzzzzz2' }))}.${valid.split('.')[2]}`,
      'a credential_version the connection does not have': await tokenFor(producerCred, { credential_version: producerCred.credentialVersion + 1 }),
      'unknown connection': await tokenFor({ ...producerCred, clientId: 'czzzzzzzzzzzz' }),
    };
    for (const [what, token] of Object.entries(cases)) {
      expect({ what, ...(await publish(token)) }).toMatchObject({ what, status: 401, rule: 'producer.unauthenticated' });
    }
  });

  it('answers 403 producer.not_registered for a token of the wrong kind, both ways', async () => {
    expect(await publish(await tokenFor(consumerCred))).toMatchObject({ status: 403, rule: 'producer.not_registered' });
    const res = await fetch(`${server.url}/v1/tenants/${workspaceId}/consumers/${consumerCred.clientId}/messages`, {
      headers: { Authorization: `Bearer ${await tokenFor(producerCred)}` },
    });
    expect(res.status).toBe(403);
    const ok = await fetch(`${server.url}/v1/tenants/${workspaceId}/consumers/${consumerCred.clientId}/messages`, {
      headers: { Authorization: `Bearer ${await tokenFor(consumerCred)}` },
    });
    expect(ok.status).toBe(200);
  });

  it('answers 403 tenant.mismatch when the path names another workspace', async () => {
    expect(await publish(await tokenFor(producerCred), 'wzzzzzzzzzzz2')).toMatchObject({ status: 403, rule: 'tenant.mismatch' });
  });

  it('holds a bus token once it verified it, and no forged or unknown one (what lets host limits wait for the quota)', async () => {
    const routeIdentity = identities[0] as Identity;
    const token = await tokenFor(producerCred, { iat: Math.floor(Date.now() / 1000) - 1 });
    expect(routeIdentity.holdsVerifiedToken(`Bearer ${token}`)).toBe(false);
    expect(await publish(token)).toMatchObject({ status: 202 });
    expect(routeIdentity.holdsVerifiedToken(`Bearer ${token}`)).toBe(true);
    expect(routeIdentity.holdsVerifiedToken(`bearer  ${token}`)).toBe(true);
    const [header, payload] = token.split('.') as [string, string, string];
    const forged = `${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`;
    expect(await publish(forged)).toMatchObject({ status: 401 });
    for (const authorization of [`Bearer ${forged}`, token, `Basic ${token}`, undefined]) expect(routeIdentity.holdsVerifiedToken(authorization)).toBe(false);
  });
});

/** A propagation time is read every 25 ms; one past three times the goal fails. */
const PROPAGATION_WAIT = { timeoutMs: PROPAGATION_GOAL_MS * 3, intervalMs: 25 };

describe('propagation through the control topic (target ≤ 2 s)', () => {
  it('ends tokens of the previous credential version on every instance after a rotation', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    const [a, b] = [await startIdentity('a'), await startIdentity('b')];
    const old = await tokenFor(cred);
    // Both instances cache the connection (TTL 30 s), so only the event can end the old token early.
    for (const i of [a, b]) await i.authenticate(`Bearer ${old}`, { kind: 'producer', tenant: workspaceId });
    const rotated = await admin.rotateCredential(cred.clientId, { overlapSeconds: 300 });
    const refused = async (i: Identity) =>
      i.authenticate(`Bearer ${old}`, { kind: 'producer' }).then(
        () => false,
        (err: { rule?: string }) => err.rule === 'producer.unauthenticated',
      );
    const ms = await msUntil(async () => (await refused(a)) && (await refused(b)), { ...PROPAGATION_WAIT, what: 'the old token refused by both instances' });
    expect(ms).toBeLessThanOrEqual(PROPAGATION_GOAL_MS);
    await expect(a.authenticate(`Bearer ${await tokenFor(rotated)}`, { kind: 'producer' })).resolves.toMatchObject({ credentialVersion: 2 });
  }, 150_000);

  it('refuses a revoked connection with 403 producer.not_registered', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    const token = await tokenFor(cred);
    expect((await publish(token)).status).toBe(202);
    await admin.revokeConnection(cred.clientId);
    const ms = await msUntil(async () => (await publish(token)).rule === 'producer.not_registered', {
      ...PROPAGATION_WAIT,
      what: 'the revoked connection refused',
    });
    expect(ms).toBeLessThanOrEqual(PROPAGATION_GOAL_MS);
  }, 30_000);
});

describe('the cache without events', () => {
  it('never serves a connection longer than its TTL', async () => {
    const cred = await admin.createConnection({ appId, kind: 'producer' });
    let clock = Date.now();
    const cache = new ConnectionCache(KnexIdentityStore.create(db), 10_000, () => new Date(clock));
    expect((await cache.get(cred.clientId))?.status).toBe('active');
    await db('connections').where({ id: cred.clientId }).update({ status: 'revoked' });
    clock += 9_999;
    expect((await cache.get(cred.clientId))?.status).toBe('active');
    clock += 1;
    expect((await cache.get(cred.clientId))?.status).toBe('revoked');
    expect(() => new ConnectionCache(KnexIdentityStore.create(db), 30_001)).toThrow(/at most 30000 ms/);
  });
});

describe('the control listener without Kafka', () => {
  it('lets the process start anyway and stops cleanly', async () => {
    const dead = createKafka({ brokers: ['127.0.0.1:1'], clientId: 'identity-test-dead', logger });
    const listener = createControlListener({ kafka: dead, name: 'dead', logger, onEvent: () => undefined, joinTimeoutMs: 300, retryMs: 100 });
    const started = Date.now();
    await listener.start();
    expect(Date.now() - started).toBeLessThan(2_000);
    await listener.stop();
  }, 10_000);
});
