/**
 * Stored bytes the pull API cannot render as an envelope (invariant F): rows stored before the gateway
 * refused such bodies (a UTF-8 BOM before the JSON is the case seen), inserted straight into Postgres.
 * Through the real HTTP app of the consumer routes on the real Postgres: the receive answers 200 with
 * every leased record, the unrenderable one with its exact bytes and its receipt handle, nothing else
 * of the batch is withheld, and the counter and the warn line say so (never the body).
 *
 * Bearer authentication is the one stand-in (the connection quota is the real one, on Redis): a consumer's token needs the auth service's signing keys,
 * which the end-to-end tests (test/quarantine.test.ts) exercise with a real token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { uncountedActivity, useTestDatabase } from '@bus/fixtures';
import type { Knex } from '@bus/db';
import { KnexDeliveryStore, messageToEnqueue } from '@bus/queue';
import { createHttpApp, createRequestMetrics, serve, violationBody, type RunningServer } from '@bus/http';
import { connectionQuota, createConnectionUse, KnexQuotaStore, type BearerAuthenticator, type BearerIdentity } from '@bus/identity';
import { createConnectionQuotas, createRedis, type Redis } from '@bus/limits';
import { createLogger, createMetricsRegistry } from '@bus/observability';
import { openapi } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, requireEnv } from '@bus/testing';
import { createPullApiService } from './service';
import { redisPurgeMarks } from './sqs-purge';

const workspaceId = 'wpullunrendr2';
const organisationId = 'opullunrendr2';
const appId = 'apullunrendr2';
const consumerId = 'cpullunrendr2';
const busApi = createOpenApiChecker(openapi.bus);

const database = useTestDatabase({ applicationName: 'pull-unrenderable-test', poolMax: 6 });
let db: Knex;
let redis: Redis;
let server: RunningServer;
let stopService: () => Promise<void>;
const metrics = createMetricsRegistry({ defaultMetrics: false });
const logLines: string[] = [];
const logger = createLogger({
  service: 'pull-unrenderable-test',
  level: 'info',
  destination: new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) }),
});

/** Lets every request through as the consumer connection (see the file's comment). */
const consumerAuthenticator: BearerAuthenticator = {
  authenticate: async () => identity(),
  authenticateBearer: () => (_req: Request, res: Response, next: NextFunction) => {
    res.locals.identity = identity();
    next();
  },
};

function identity(): BearerIdentity {
  const iat = Math.floor(Date.now() / 1000);
  return {
    clientId: consumerId,
    kind: 'consumer',
    workspaceId,
    organisationId,
    appId,
    credentialVersion: 1,
    consumerTools: null,
    claims: {
      iss: 'http://bus.test/v1/oauth',
      aud: 'http://bus.test',
      sub: consumerId,
      tenant: workspaceId,
      org: organisationId,
      app: appId,
      environment: 'sandbox',
      credential_version: 1,
      iat,
      exp: iat + 3600,
      jti: randomUUID(),
    },
  };
}

beforeAll(async () => {
  db = database.db;
  redis = createRedis(requireEnv('REDIS_URL'), logger, { keyPrefix: `pull-unrenderable-${randomBytes(4).toString('hex')}` });
  await database.tenancy.tenant({ organisationId, workspaceId, appId, connections: [{ id: consumerId, kind: 'consumer' }] });
  const service = createPullApiService({
    readiness: [],
    db,
    databaseUrl: database.url,
    authenticator: consumerAuthenticator,
    // The real quota (this run's own Redis keys): its RateLimit fields are part of every answer.
    connectionQuota: connectionQuota({ store: KnexQuotaStore.create(db), quotas: createConnectionQuotas(redis) }),
    receiptHandleKey: randomBytes(32),
    logger,
    metrics,
    activity: uncountedActivity,
    connectionUse: createConnectionUse({ db, logger }),
    // The SQS door is not driven here (test/sqs.test.ts is): no principal resolves, no connection either.
    sqs: {
      principals: { signingPrincipal: async () => undefined },
      connections: { get: async () => null },
      limit: (_req, _res, next) => next(),
      region: 'us-east-1',
      maxSkewMs: 300_000,
      baseUrl: 'http://bus.test',
      purgeMarks: redisPurgeMarks(redis),
    },
  });
  await service.start?.();
  stopService = async () => service.stop?.();
  const app = createHttpApp({
    name: 'pull-api',
    logger,
    metrics,
    requestMetrics: createRequestMetrics(metrics),
    readiness: [],
    renderError: violationBody,
    routers: service.routers,
  });
  server = await serve(app, { host: '127.0.0.1', port: 0, logger });
}, 30_000);

database.beforeDrop(async () => {
  await server?.close(1000);
  await stopService?.();
  redis?.disconnect();
});

let offset = 0;
const deliveries = () => KnexDeliveryStore.create(db);

/** A well-formed message, enqueued through delivery's own store. */
async function enqueueGood(correlationId: string): Promise<{ messageId: string; raw: Buffer }> {
  const messageId = randomUUID();
  const raw = Buffer.from(JSON.stringify({ message_id: messageId, correlation_id: correlationId, payload: { n: offset } }), 'utf8');
  await deliveries().enqueue(messageToEnqueue(workspaceId, correlationId, { messageId, body: raw }));
  return { messageId, raw };
}

/** A row as an older gateway stored it, written straight into the tables (no code of today would). */
async function insertStored(correlationId: string, raw: Buffer): Promise<string> {
  const messageId = randomUUID();
  await db('messages').insert({
    workspace_id: workspaceId,
    message_id: messageId,
    body: raw,
    message_type: 'telling.started',
    correlation_id: correlationId,
    published_at: new Date(),
    kafka_partition: 0,
    kafka_offset: offset++,
  });
  // Its story's head when the story has no un-acked delivery (as enqueue marks it).
  const open = await db('deliveries').where({ consumer_id: consumerId, correlation_id: correlationId }).whereNull('acked_at').first('id');
  await db('deliveries').insert({ consumer_id: consumerId, workspace_id: workspaceId, message_id: messageId, correlation_id: correlationId, is_head: !open });
  return messageId;
}

interface Received {
  receipt_handle: string;
  message_id: string;
  envelope: Record<string, unknown> | null;
  envelope_error?: string;
  body_base64?: string;
}

const consumerPath = (route: string) => `/v1/tenants/${workspaceId}/consumers/${consumerId}/${route}`;

async function call(method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await fetchObserved(`${server.url}${path}`, {
    method,
    headers: { Authorization: 'Bearer stand-in', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  busApi.check(method, path, res);
  return res;
}

async function unrenderableCount(reason: string): Promise<number> {
  const counted = await metrics.getSingleMetric('bus_pull_unrenderable_total')?.get();
  return counted?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

afterEach(async () => {
  await db('deliveries').where({ consumer_id: consumerId }).update({ state: 'acked', acked_at: new Date(), is_head: false });
});

describe('a stored message the pull API cannot render', () => {
  it('is handed out with its exact bytes and its handle (BOM before the JSON); nothing else of the batch is withheld; it acks', async () => {
    const poisoned = `p-${randomUUID()}`;
    const other = `o-${randomUUID()}`;
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ message_id: 'm', payload: {} }))]);
    const before = await unrenderableCount('json.invalid');
    const poisonId = await insertStored(poisoned, bom);
    const after = await enqueueGood(poisoned); // the run behind it in its own group
    const elsewhere = await enqueueGood(other); // another group, same receive

    const res = await call('GET', `${consumerPath('messages')}?wait_seconds=0&max_messages=10`);
    expect(res.status).toBe(200);
    const messages = (res.body as { messages: Received[] }).messages;
    expect(messages.map((m) => m.message_id)).toEqual([poisonId, after.messageId, elsewhere.messageId]);
    const [bad, good, good2] = messages;
    expect(bad).toMatchObject({ envelope: null, envelope_error: 'json.invalid' });
    expect(Buffer.compare(Buffer.from(bad!.body_base64!, 'base64'), bom)).toBe(0);
    expect(good!.envelope).toEqual(JSON.parse(after.raw.toString('utf8')));
    expect(good2!.envelope).toEqual(JSON.parse(elsewhere.raw.toString('utf8')));
    expect(good).not.toHaveProperty('body_base64');
    expect(good).not.toHaveProperty('envelope_error');
    expect(await unrenderableCount('json.invalid')).toBe(before + 1);

    const warned = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message_id === poisonId);
    expect(warned).toEqual([expect.objectContaining({ level: 'warn', consumer_id: consumerId, message_id: poisonId, reason: 'json.invalid' })]);
    expect(logLines.join('\n')).not.toContain(bom.toString('base64'));

    const acked = await call('POST', consumerPath('ack'), { receipt_handles: messages.map((m) => m.receipt_handle) });
    expect(acked.status).toBe(200);
    expect((acked.body as { results: Array<{ status: string }> }).results.map((r) => r.status)).toEqual(['done', 'done', 'done']);
    const left = await call('GET', `${consumerPath('messages')}?wait_seconds=0`);
    expect((left.body as { messages: Received[] }).messages).toEqual([]);
  });

  it.each([
    ['bytes that are not UTF-8', 'utf8.invalid', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
    ['a JSON value that is not an object', 'json.not_object', Buffer.from('[1,2,3]')],
    ['JSON nested deeper than a response can carry', 'json.too_deep', Buffer.from(`{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`)],
  ])('hands out %s as unrenderable (%s), with a handle that nacks', async (_what, reason, raw) => {
    const id = await insertStored(`u-${randomUUID()}`, raw);
    const res = await call('GET', `${consumerPath('messages')}?wait_seconds=0`);
    expect(res.status).toBe(200);
    const [got] = (res.body as { messages: Received[] }).messages;
    expect(got).toMatchObject({ message_id: id, envelope: null, envelope_error: reason });
    expect(Buffer.compare(Buffer.from(got!.body_base64!, 'base64'), raw)).toBe(0);
    const nacked = await call('POST', consumerPath('nack'), { receipt_handles: [got!.receipt_handle] });
    expect((nacked.body as { results: Array<{ status: string }> }).results).toEqual([{ receipt_handle: got!.receipt_handle, status: 'done' }]);
  });

  it('renders an envelope nested as deep as the renderer allows', async () => {
    const depth = 1000;
    // The object itself is level 1; the arrays inside it make up the rest.
    const raw = Buffer.from(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
    const id = await insertStored(`d-${randomUUID()}`, raw);
    const res = await call('GET', `${consumerPath('messages')}?wait_seconds=0`);
    expect(res.status).toBe(200);
    const [got] = (res.body as { messages: Received[] }).messages;
    expect(got?.message_id).toBe(id);
    expect(got?.envelope).toEqual(JSON.parse(raw.toString('utf8')));
  });
});
