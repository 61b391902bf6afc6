import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { exampleMessage } from './support/messages';
import { PrincipalFixture, signedHeaders, type Credentials } from './support/principals';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The pull API's SQS door on the compiled all-in-one, driven by @aws-sdk/client-sqs with
 * its own signer, pointed at the bus on loopback (endpoint, region and static credentials: it cannot
 * reach AWS). Principals are registered and verified through the admin API and principals/verify
 * (support/principals.ts, as sigv4.test.ts). Every answer the SDK reads is checked against bus.json on its way in.
 */
const busApi = createOpenApiChecker(openapi.bus);
const REGION = 'eu-west-1';
const SYSTEM_ID = 'storyteller.web';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/bus-reader';

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let other: Tenant;
let producerToken: string;
let principals: PrincipalFixture;
let reader: Credentials;
let queueUrl: string;

beforeAll(async () => {
  bus = await startBus({ AWS_SIGV4_REGION: REGION });
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  const permissions = { systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) };
  house = await tenants.tenant(permissions);
  other = await tenants.tenant(permissions);
  producerToken = await tenants.token(house.producer);
  principals = new PrincipalFixture(bus, REGION, ROLE_ARN);
  reader = await principals.verified(house.consumer.clientId, house.workspaceId);
  queueUrl = (await sqs(reader).send(new GetQueueUrlCommand({ QueueName: house.consumer.clientId }))).QueueUrl!;
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

/** The SDK's HTTP handler, reading each answer once to check it against bus.json before the SDK parses it. */
class CheckedHandler extends NodeHttpHandler {
  override async handle(...args: Parameters<NodeHttpHandler['handle']>): ReturnType<NodeHttpHandler['handle']> {
    const [request] = args;
    const answered = await super.handle(...args);
    const bytes = Buffer.concat(await (answered.response.body as Readable).toArray());
    const headers = answered.response.headers;
    busApi.check(request.method, request.path, {
      status: answered.response.statusCode,
      headers,
      body: bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined,
    });
    answered.response.body = Readable.from([bytes]);
    return answered;
  }
}

function sqs(credentials: Credentials, region = REGION): SQSClient {
  return new SQSClient({ endpoint: `${bus.busUrl}/v1/sqs`, region, credentials, maxAttempts: 1, requestHandler: new CheckedHandler() });
}

const message = (type: string, correlationId: string) => exampleMessage(type, correlationId, SYSTEM_ID);

async function publishRaw(raw: string): Promise<void> {
  const res = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producerToken, raw);
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 202 });
}

const receive = (wait = 10, max = 10, extra: { VisibilityTimeout?: number } = {}) =>
  sqs(reader).send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: wait, MaxNumberOfMessages: max, MessageSystemAttributeNames: ['All'], ...extra }),
  );

async function counts(): Promise<Record<string, string> | undefined> {
  return (
    await sqs(reader).send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    )
  ).Attributes;
}

/** What the SDK threw: its error name (the code from __type) and HTTP status. */
async function refusal(call: Promise<unknown>): Promise<{ name: string; status: number | undefined }> {
  try {
    await call;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode };
  }
  throw new Error('expected a refusal');
}

describe('the SQS door (@aws-sdk/client-sqs)', () => {
  it('long-polls until a publish, hands out the exact bytes with their MD5 and attributes; DeleteMessage removes; counts follow', async () => {
    expect(queueUrl).toBe(`${bus.env.BUS_BASE_URL}/v1/sqs/${house.consumer.clientId}`);
    const m = message('telling.started', `c-${randomUUID()}`);
    // Spacing and escapes exactly as the producer sent them (\u002d is the '-' of the parsed value).
    const raw = JSON.stringify(m, null, 3).replace('"som_version"', '"som_version"   ').replace('"telling-0001"', '"telling\\u002d0001"');
    expect(raw).toContain('telling\\u002d0001');
    const polling = receive(20);
    const publishedAt = Date.now();
    await publishRaw(raw);
    const { Messages } = await polling;
    expect(Date.now() - publishedAt).toBeLessThan(10_000);
    expect(Messages).toHaveLength(1);
    const got = Messages![0]!;
    expect(Buffer.from(got.Body!, 'utf8').equals(Buffer.from(raw, 'utf8'))).toBe(true);
    expect(got.MessageId).toBe(m.message_id);
    expect(got.Attributes).toEqual({
      MessageGroupId: m.correlation_id,
      MessageDeduplicationId: m.message_id,
      SentTimestamp: expect.stringMatching(/^\d+$/),
      ApproximateReceiveCount: '1',
      SequenceNumber: expect.stringMatching(/^\d+$/),
      SenderId: SYSTEM_ID,
      ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/),
    });
    expect(Math.abs(Number(got.Attributes!.SentTimestamp) - publishedAt)).toBeLessThan(60_000);

    expect(await counts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '1' });
    await sqs(reader).send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: got.ReceiptHandle }));
    expect(await counts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    expect(await refusal(sqs(reader).send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: got.ReceiptHandle })))).toEqual({
      name: 'InvalidParameterValue',
      status: 400,
    });
    expect((await receive(0)).Messages).toBeUndefined();
  }, 60_000);

  it('ChangeMessageVisibility 0 hands the run out again in order; a longer one keeps the handle; batches answer per entry', async () => {
    const correlationId = `c-${randomUUID()}`;
    const ms = [message('telling.started', correlationId), message('telling.exposed', correlationId), message('telling.ended', correlationId)];
    for (const m of ms) await publishRaw(JSON.stringify(m));
    // All three enqueued, so one receive leases the whole run (the head's lease blocks the rest).
    await deliveryCaughtUp(bus);
    const first: Message[] = [];
    while (first.length < ms.length) {
      const { Messages = [] } = await receive(10);
      first.push(...Messages);
    }
    expect(first.map((r) => r.MessageId)).toEqual(ms.map((m) => m.message_id));

    // Released at the head: the whole leased run comes back, in order, received a second time.
    await sqs(reader).send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: first[0]!.ReceiptHandle, VisibilityTimeout: 0 }));
    const again = (await receive(10)).Messages ?? [];
    expect(again.map((r) => [r.MessageId, r.Attributes?.ApproximateReceiveCount])).toEqual(ms.map((m) => [m.message_id, '2']));

    const moved = await sqs(reader).send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'current', ReceiptHandle: again[0]!.ReceiptHandle, VisibilityTimeout: 60 },
          { Id: 'spent', ReceiptHandle: first[1]!.ReceiptHandle, VisibilityTimeout: 60 },
          { Id: 'forged', ReceiptHandle: 'bm90LWEtaGFuZGxl', VisibilityTimeout: 60 },
        ],
      }),
    );
    expect(moved.Successful).toEqual([{ Id: 'current' }]);
    expect(moved.Failed?.map((f) => [f.Id, f.Code, f.SenderFault])).toEqual([
      ['spent', 'MessageNotInflight', true],
      ['forged', 'ReceiptHandleIsInvalid', true],
    ]);
    const deleted = await sqs(reader).send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [...again.map((r, i) => ({ Id: `m${i}`, ReceiptHandle: r.ReceiptHandle })), { Id: 'old', ReceiptHandle: first[2]!.ReceiptHandle }],
      }),
    );
    expect(deleted.Successful).toEqual([{ Id: 'm0' }, { Id: 'm1' }, { Id: 'm2' }]);
    expect(deleted.Failed?.map((f) => [f.Id, f.Code])).toEqual([['old', 'InvalidParameterValue']]);
    expect(await counts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  }, 60_000);

  it('ChangeMessageVisibilityBatch 0 over a received run answers every current entry Successful (none spent by an earlier entry)', async () => {
    const correlationId = `c-${randomUUID()}`;
    const ms = [message('telling.started', correlationId), message('telling.exposed', correlationId), message('telling.ended', correlationId)];
    for (const m of ms) await publishRaw(JSON.stringify(m));
    await deliveryCaughtUp(bus);
    const first: Message[] = [];
    while (first.length < ms.length) first.push(...((await receive(10)).Messages ?? []));
    const stale = first[2]!.ReceiptHandle!;
    // The head first, as a client lists a run: releasing it releases the followers, which were current at the call.
    const released = await sqs(reader).send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: first.map((r, i) => ({ Id: `m${i}`, ReceiptHandle: r.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
    expect([released.Successful, released.Failed ?? []]).toEqual([[{ Id: 'm0' }, { Id: 'm1' }, { Id: 'm2' }], []]);
    const again = (await receive(10)).Messages ?? [];
    expect(again.map((r) => [r.MessageId, r.Attributes?.ApproximateReceiveCount])).toEqual(ms.map((m) => [m.message_id, '2']));
    // A handle spent before the call still fails.
    const spent = await sqs(reader).send(
      new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'old', ReceiptHandle: stale, VisibilityTimeout: 0 }] }),
    );
    expect(spent.Failed?.map((f) => [f.Id, f.Code])).toEqual([['old', 'MessageNotInflight']]);
    await sqs(reader).send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: again.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.ReceiptHandle })) }),
    );
    expect(await counts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  }, 60_000);

  it('accepts the same signed request twice within the skew window, as AWS does (boto3 and the AWS CLI send such repeats)', async () => {
    const body = JSON.stringify({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] });
    // One signature, a minute old (inside AWS_SIGV4_MAX_SKEW), sent twice byte for byte.
    const headers = await signedHeaders(bus, reader, '/v1/sqs/', body, {
      region: REGION,
      service: 'sqs',
      signingDate: new Date(Date.now() - 60_000),
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.GetQueueAttributes' },
    });
    for (let i = 0; i < 2; i++) {
      const answer = await fetchObserved(`${bus.busUrl}/v1/sqs/`, { method: 'POST', headers, body });
      busApi.check('POST', '/v1/sqs/', answer);
      expect([answer.status, answer.body]).toEqual([200, { Attributes: { ApproximateNumberOfMessages: expect.any(String) } }]);
    }

    // Outside the skew window it is refused.
    const stale = await signedHeaders(bus, reader, '/v1/sqs/', body, {
      region: REGION,
      service: 'sqs',
      signingDate: new Date(Date.now() - 6 * 60_000),
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.GetQueueAttributes' },
    });
    const refused = await fetchObserved(`${bus.busUrl}/v1/sqs/`, { method: 'POST', headers: stale, body });
    busApi.check('POST', '/v1/sqs/', refused);
    expect([refused.status, (refused.body as { __type: string }).__type]).toEqual([403, 'com.amazonaws.sqs#SignatureDoesNotMatch']);
  }, 60_000);

  it('PurgeQueue removes what waits and what is in flight and the queue receives on; a second within 60 s is PurgeQueueInProgress (AWS JSON and query protocol)', async () => {
    /** A queue of its own (the 60-s mark stays on it), with a verified reader and a producer's publish. */
    const freshQueue = async () => {
      const tenant = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
      const token = await tenants.token(tenant.producer);
      const credentials = await principals.verified(tenant.consumer.clientId, tenant.workspaceId);
      const url = (await sqs(credentials).send(new GetQueueUrlCommand({ QueueName: tenant.consumer.clientId }))).QueueUrl!;
      const publish = async (correlationId: string, type = 'telling.started') => {
        const m = message(type, correlationId);
        const res = await bearerCall(bus, 'POST', `/v1/tenants/${tenant.workspaceId}/messages`, token, JSON.stringify(m));
        expect({ status: res.status, body: res.body }).toMatchObject({ status: 202 });
        return m.message_id;
      };
      const queueCounts = async () =>
        (
          await sqs(credentials).send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
          )
        ).Attributes;
      return { credentials, url, publish, queueCounts };
    };
    const signed = async (credentials: Credentials, body: string, headers: Record<string, string>) => {
      const answer = await fetchObserved(`${bus.busUrl}/v1/sqs/`, {
        method: 'POST',
        headers: await signedHeaders(bus, credentials, '/v1/sqs/', body, { region: REGION, service: 'sqs', headers }),
        body,
      });
      busApi.check('POST', '/v1/sqs/', answer);
      return answer;
    };
    const json = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.PurgeQueue' };
    const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };

    // AWS JSON through the SDK: two messages of one story and one of another, one of them leased.
    const a = await freshQueue();
    const story = `c-${randomUUID()}`;
    await a.publish(story);
    await a.publish(story, 'telling.exposed');
    await a.publish(`c-${randomUUID()}`);
    await eventually(a.queueCounts, (c) => c?.ApproximateNumberOfMessages === '3', { timeoutMs: 30_000, what: 'three messages waiting' });
    const leased = (await sqs(a.credentials).send(new ReceiveMessageCommand({ QueueUrl: a.url, MaxNumberOfMessages: 1 }))).Messages!;
    expect(leased).toHaveLength(1);
    const purged = await sqs(a.credentials).send(new PurgeQueueCommand({ QueueUrl: a.url }));
    expect(purged.$metadata.httpStatusCode).toBe(200);
    expect(await a.queueCounts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    // The purged lease's handle answers as any stale one does.
    expect(await refusal(sqs(a.credentials).send(new DeleteMessageCommand({ QueueUrl: a.url, ReceiptHandle: leased[0]!.ReceiptHandle })))).toEqual({
      name: 'InvalidParameterValue',
      status: 400,
    });
    expect(await refusal(sqs(a.credentials).send(new PurgeQueueCommand({ QueueUrl: a.url })))).toEqual({ name: 'PurgeQueueInProgress', status: 400 });
    const again = await signed(a.credentials, JSON.stringify({ QueueUrl: a.url }), json);
    expect([again.status, again.headers.get('x-amzn-query-error'), (again.body as { __type: string }).__type]).toEqual([
      400,
      'AWS.SimpleQueueService.PurgeQueueInProgress;Sender',
      'com.amazonaws.sqs#PurgeQueueInProgress',
    ]);
    // Published afterwards, in the purged story too: received.
    const after = await a.publish(story, 'telling.ended');
    const next = await sqs(a.credentials).send(new ReceiveMessageCommand({ QueueUrl: a.url, WaitTimeSeconds: 20, MaxNumberOfMessages: 10 }));
    expect(next.Messages?.map((m) => m.MessageId)).toEqual([after]);
    // Another connection's queue is not purged through this principal.
    expect(await refusal(sqs(reader).send(new PurgeQueueCommand({ QueueUrl: a.url })))).toEqual({ name: 'QueueDoesNotExist', status: 400 });

    // The query protocol: an empty PurgeQueueResponse, then the XML refusal.
    const b = await freshQueue();
    await b.publish(`c-${randomUUID()}`);
    await eventually(b.queueCounts, (c) => c?.ApproximateNumberOfMessages === '1', { timeoutMs: 30_000, what: 'a message waiting' });
    const query = `Action=PurgeQueue&Version=2012-11-05&QueueUrl=${encodeURIComponent(b.url)}`;
    const done = await signed(b.credentials, query, form);
    expect([done.status, done.headers.get('content-type'), done.body]).toEqual([
      200,
      'text/xml; charset=utf-8',
      expect.stringMatching(
        /^<\?xml version="1.0"\?><PurgeQueueResponse xmlns="http:\/\/queue.amazonaws.com\/doc\/2012-11-05\/"><ResponseMetadata><RequestId>[^<]+<\/RequestId><\/ResponseMetadata><\/PurgeQueueResponse>$/,
      ),
    ]);
    expect(await b.queueCounts()).toEqual({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    const refused = await signed(b.credentials, query, form);
    expect([refused.status, refused.body]).toEqual([
      400,
      expect.stringContaining('<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.PurgeQueueInProgress</Code>'),
    ]);
  }, 120_000);

  it("serves requests posted to a queue's own URL (where the Java SDK v1 posts; QueueUrl may be left out there), and names every answer's request id in x-amzn-RequestId", async () => {
    const ownPath = `/v1/sqs/${house.consumer.clientId}`;
    const post = async (urlPath: string, body: string, headers: Record<string, string>) => {
      const answer = await fetchObserved(`${bus.busUrl}${urlPath}`, {
        method: 'POST',
        headers: await signedHeaders(bus, reader, urlPath, body, { region: REGION, service: 'sqs', headers }),
        body,
      });
      busApi.check('POST', urlPath, answer);
      // The request id SQS sends, and botocore and the AWS SDKs read: the bus's own request id.
      expect(answer.headers.get('x-amzn-requestid')).toBe(answer.headers.get('x-request-id'));
      expect(answer.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
      return answer;
    };
    const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
    const json = (action: string) => ({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` });

    const arn = await post(ownPath, 'Action=GetQueueAttributes&Version=2012-11-05&AttributeName.1=QueueArn', form);
    expect([arn.status, arn.body]).toEqual([
      200,
      expect.stringContaining(`<Name>QueueArn</Name><Value>arn:aws:sqs:${REGION}:000000000000:${house.consumer.clientId}</Value>`),
    ]);
    expect(arn.body).toContain(`<RequestId>${arn.headers.get('x-amzn-requestid')}</RequestId>`);
    const received = await post(ownPath, JSON.stringify({ WaitTimeSeconds: 0 }), json('ReceiveMessage'));
    expect(received.status).toBe(200);
    // The path and the QueueUrl, when both are given, must both name the caller's queue.
    const elsewhere = await post(`/v1/sqs/${other.consumer.clientId}`, 'Action=GetQueueAttributes&Version=2012-11-05', form);
    expect([elsewhere.status, elsewhere.body]).toEqual([400, expect.stringContaining('<Code>AWS.SimpleQueueService.NonExistentQueue</Code>')]);
    const otherUrl = `${bus.env.BUS_BASE_URL}/v1/sqs/${other.consumer.clientId}`;
    const mismatch = await post(ownPath, JSON.stringify({ QueueUrl: otherUrl }), json('GetQueueAttributes'));
    expect([mismatch.status, mismatch.body]).toEqual([400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: expect.any(String) }]);
    // The query protocol's empty list (Entries=, as botocore writes it) is an empty batch.
    const none = await post(ownPath, 'Action=DeleteMessageBatch&Version=2012-11-05&Entries=', form);
    expect([none.status, none.body]).toEqual([400, expect.stringContaining('<Code>AWS.SimpleQueueService.EmptyBatchRequest</Code>')]);
    // A quoted character XML cannot hold comes as U+FFFD: the error stays a document.
    const quoted = await post(ownPath, 'Action=GetQueueAttributes&Version=2012-11-05&AttributeName.1=A%01B', form);
    expect([quoted.status, quoted.body]).toEqual([400, expect.stringContaining('<Message>Unknown Attribute A\uFFFDB;')]);
    // Another method on a queue's URL is the door's own refusal.
    const get = await fetchObserved(`${bus.busUrl}${ownPath}`, { method: 'GET' });
    expect([get.status, (get.body as { __type?: string }).__type, get.headers.get('x-amzn-requestid')]).toEqual([
      405,
      'com.amazonaws.sqs#UnsupportedOperation',
      get.headers.get('x-request-id'),
    ]);

    // The SDK reads the id, of an answer and of a refusal.
    const answered = await sqs(reader).send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
    expect(answered.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await sqs(reader)
      .send(new GetQueueUrlCommand({ QueueName: other.consumer.clientId }))
      .then(
        () => undefined,
        (err: { $metadata?: { requestId?: string } }) => err.$metadata?.requestId,
      );
    expect(refused).toMatch(/^[0-9a-f-]{36}$/);
  }, 60_000);

  it("refuses another connection's queue, an unverified or a producer's principal, a bad signature, another region, and no signature", async () => {
    expect(await refusal(sqs(reader).send(new GetQueueUrlCommand({ QueueName: other.consumer.clientId })))).toEqual({ name: 'QueueDoesNotExist', status: 400 });
    const otherUrl = `${bus.env.BUS_BASE_URL}/v1/sqs/${other.consumer.clientId}`;
    expect(await refusal(sqs(reader).send(new ReceiveMessageCommand({ QueueUrl: otherUrl })))).toEqual({ name: 'QueueDoesNotExist', status: 400 });

    const pending = await principals.register(house.consumer.clientId);
    expect(await refusal(sqs(pending).send(new GetQueueUrlCommand({ QueueName: house.consumer.clientId })))).toEqual({ name: 'AccessDenied', status: 403 });
    const producer = await principals.verified(house.producer.clientId, house.workspaceId);
    expect(await refusal(sqs(producer).send(new GetQueueUrlCommand({ QueueName: house.producer.clientId })))).toEqual({ name: 'AccessDenied', status: 403 });
    const forged = { accessKeyId: reader.accessKeyId, secretAccessKey: 'x'.repeat(40) };
    expect(await refusal(sqs(forged).send(new GetQueueUrlCommand({ QueueName: house.consumer.clientId })))).toEqual({
      name: 'SignatureDoesNotMatch',
      status: 403,
    });
    expect(await refusal(sqs(reader, 'us-west-2').send(new GetQueueUrlCommand({ QueueName: house.consumer.clientId })))).toEqual({
      name: 'SignatureDoesNotMatch',
      status: 403,
    });

    // Without an SDK: an action the door does not serve, and no signature, are AWS JSON 1.0 errors too.
    const sendBody = JSON.stringify({ QueueUrl: queueUrl, MessageBody: 'x' });
    const headers = await signedHeaders(bus, reader, '/v1/sqs/', sendBody, {
      region: REGION,
      service: 'sqs',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
    });
    const unsupported = await fetchObserved(`${bus.busUrl}/v1/sqs/`, { method: 'POST', headers, body: sendBody });
    busApi.check('POST', '/v1/sqs/', unsupported);
    expect([unsupported.status, (unsupported.body as { __type: string }).__type]).toEqual([400, 'com.amazonaws.sqs#InvalidAction']);
    // A body is read as every JSON body of the bus is (I-JSON): a member name twice is refused, not
    // settled by keeping the last (here the queue another reader of the body would have taken).
    const twice = `{"QueueUrl":${JSON.stringify(queueUrl)},"QueueUrl":${JSON.stringify(`${queueUrl}-other`)}}`;
    const twiceHeaders = await signedHeaders(bus, reader, '/v1/sqs/', twice, {
      region: REGION,
      service: 'sqs',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
    });
    const duplicate = await fetchObserved(`${bus.busUrl}/v1/sqs/`, { method: 'POST', headers: twiceHeaders, body: twice });
    busApi.check('POST', '/v1/sqs/', duplicate);
    expect([duplicate.status, duplicate.body]).toEqual([
      400,
      { __type: 'com.amazonaws.sqs#InvalidParameterValue', message: expect.stringMatching(/QueueUrl" appears twice .*\(at \/QueueUrl\)$/) },
    ]);
    const unsigned = await fetchObserved(`${bus.busUrl}/v1/sqs/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'AmazonSQS.SendMessage' },
      body: '{}',
    });
    busApi.check('POST', '/v1/sqs/', unsigned);
    expect([unsigned.status, unsigned.headers.get('content-type'), unsigned.body]).toEqual([
      401,
      'application/x-amz-json-1.0; charset=utf-8',
      { __type: 'com.amazonaws.sqs#MissingAuthenticationToken', message: expect.any(String) },
    ]);
  }, 60_000);
});
