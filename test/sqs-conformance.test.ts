import { execFile, execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
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
} from '@aws-sdk/client-sqs';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, fetchObserved, REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { PrincipalFixture, signedHeaders, type Credentials } from './support/principals';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * One conformance scenario of the SQS door, run by every client docs/sqs.md names: boto3 (AWS JSON
 * 1.0), botocore 1.29 (the AWS query protocol, form-encoded in, XML out), the AWS CLI v1 (one process
 * per call), @aws-sdk/client-sqs, aws-sdk-go-v2 and the AWS SDK for Java v1 (AWS JSON 1.0 too, a call
 * that names a queue posted to the queue's URL). The scenario is written once, over a driver per client
 * that makes one SQS call and answers its parsed result or its error code; each step's outcome per
 * client is written to .local/sqs-conformance.json, and the matrix in docs/sqs.md must be exactly those
 * outcomes. No retries anywhere: a refusal shows as the error it is. The clients run at once, each on a
 * queue of its own, so the file takes about as long as its slowest client (the AWS CLI).
 */
const busApi = createOpenApiChecker(openapi.bus);
const REGION = 'eu-west-1';
const SYSTEM_ID = 'storyteller.web';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/bus-conformance-reader';
const RESULTS_FILE = path.join(REPO_ROOT, '.local', 'sqs-conformance.json');
const MATRIX_DOC = path.join(REPO_ROOT, 'docs', 'sqs.md');

type Answer = Record<string, unknown>;
/** One SQS call by its AWS JSON name with AWS JSON parameters: the parsed answer, or the error code the client reports. */
type Call = (operation: string, params: Answer) => Promise<{ ok: Answer } | { error: string }>;
interface Driver {
  /** What a driver process says of its client before the first call: botocore's protocol, the Go SDK's module, the Java SDK's. */
  hello?: Promise<Answer>;
  call: Call;
  close(): Promise<void>;
}

const CLIENTS = ['boto3', 'botocore-query', 'awscli', 'aws-sdk-js', 'aws-sdk-go', 'aws-sdk-java-v1'] as const;
type Client = (typeof CLIENTS)[number];

/** Serves SQS calls read as JSON lines on stdin with botocore (boto3's client when boto3 is there), one at a time (lineDriver's framing). */
const PYTHON_DRIVER = `
import json, re, sys
from botocore.config import Config
from botocore.exceptions import ClientError
settings = json.loads(sys.stdin.readline())
options = dict(endpoint_url=settings['endpoint'], region_name=settings['region'], aws_access_key_id=settings['accessKeyId'],
               aws_secret_access_key=settings['secretAccessKey'],
               config=Config(connect_timeout=10, read_timeout=30, retries={'total_max_attempts': 1, 'mode': 'standard'}))
try:
    import boto3
    client = boto3.client('sqs', **options)
except ImportError:
    import botocore.session
    client = botocore.session.get_session().create_client('sqs', **options)
print(json.dumps({'protocol': client.meta.service_model.protocol}), flush=True)
snake = lambda name: re.sub(r'(?<!^)(?=[A-Z])', '_', name).lower()
for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = getattr(client, snake(request['operation']))(**request['params'])
        answer.pop('ResponseMetadata', None)
        out = {'ok': answer}
    except ClientError as err:
        name = type(err).__name__
        out = {'error': name if name != 'ClientError' else err.response['Error']['Code']}
    print(json.dumps({**out, 'id': request['id']}), flush=True)
`;

/**
 * A driver process (PYTHON_DRIVER, test/support/sqs-go, test/support/sqs-java): the settings as its
 * first line on stdin, then `{id, operation, params}` a line; it answers a first line of its own
 * (hello), then `{id, ok}`, `{id, error}` (the client's error code) or `{id, failed}` (no answer of the
 * door) per call, in any order.
 */
function lineDriver(command: string, args: string[], settings: Answer): Driver {
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { env: cleanEnv(), stdio: 'pipe' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const pending = new Map<number, { resolve: (answer: { ok: Answer } | { error: string }) => void; reject: (err: Error) => void }>();
  let greet: ((hello: Answer) => void) | undefined;
  let ended: ((err: Error) => void) | undefined;
  const hello = new Promise<Answer>((resolve, reject) => ([greet, ended] = [resolve, reject]));
  const closed = new Promise((resolve) => child.once('close', resolve));
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { id, failed, ...answer } = JSON.parse(line) as { id?: number; failed?: string } & Answer;
    if (id === undefined) return greet!(answer);
    const waiting = pending.get(id)!;
    pending.delete(id);
    if (failed !== undefined) waiting.reject(new Error(failed));
    else waiting.resolve(answer as { ok: Answer } | { error: string });
  });
  child.once('close', (code) => {
    const err = new Error(`the driver ${path.basename(command)} ended (${code}): ${stderr}`);
    ended!(err);
    for (const { reject } of pending.values()) reject(err);
  });
  let lastId = 0;
  child.stdin.write(`${JSON.stringify(settings)}\n`);
  return {
    hello,
    call: async (operation, params) => {
      await hello;
      const id = ++lastId;
      const answer = new Promise<{ ok: Answer } | { error: string }>((resolve, reject) => pending.set(id, { resolve, reject }));
      child.stdin.write(`${JSON.stringify({ id, operation, params })}\n`);
      return answer;
    },
    close: async () => {
      child.stdin.end();
      await closed;
    },
  };
}

/** The AWS CLI, one process per call, its parameters as --cli-input-json; the error code read from its message. */
function awsCliDriver(aws: string, endpoint: string, credentials: Credentials): Driver {
  // One attempt, as the other drivers: the CLI's own default retries a throttle or a 5xx out of sight.
  const env = {
    ...cleanEnv(),
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_DEFAULT_REGION: REGION,
    AWS_MAX_ATTEMPTS: '1',
    AWS_RETRY_MODE: 'standard',
  };
  const kebab = (name: string) => name.replace(/(?<!^)(?=[A-Z])/g, '-').toLowerCase();
  return {
    call: (operation, params) =>
      new Promise((resolve, reject) => {
        const args = ['sqs', kebab(operation), '--endpoint-url', endpoint, '--output', 'json', '--cli-input-json', JSON.stringify(params)];
        execFile(aws, args, { env, timeout: 45_000 }, (err, stdout, stderr) => {
          if (!err) return resolve({ ok: stdout.trim() === '' ? {} : (JSON.parse(stdout) as Answer) });
          const code = /An error occurred \(([^)]+)\)/.exec(stderr)?.[1];
          if (code) return resolve({ error: code });
          reject(new Error(`aws ${args.slice(0, 2).join(' ')} failed: ${err.message}\n${stderr}`));
        });
      }),
    close: async () => undefined,
  };
}

function sdkDriver(endpoint: string, credentials: Credentials): Driver {
  const client = new SQSClient({ endpoint, region: REGION, credentials, maxAttempts: 1 });
  const commands: Record<string, (input: never) => Promise<object>> = {
    GetQueueUrl: (input) => client.send(new GetQueueUrlCommand(input)),
    GetQueueAttributes: (input) => client.send(new GetQueueAttributesCommand(input)),
    ReceiveMessage: (input) => client.send(new ReceiveMessageCommand(input)),
    DeleteMessage: (input) => client.send(new DeleteMessageCommand(input)),
    DeleteMessageBatch: (input) => client.send(new DeleteMessageBatchCommand(input)),
    ChangeMessageVisibility: (input) => client.send(new ChangeMessageVisibilityCommand(input)),
    ChangeMessageVisibilityBatch: (input) => client.send(new ChangeMessageVisibilityBatchCommand(input)),
    PurgeQueue: (input) => client.send(new PurgeQueueCommand(input)),
  };
  return {
    call: async (operation, params) => {
      try {
        const { $metadata: _metadata, ...answer } = (await commands[operation]!(params as never)) as Answer;
        return { ok: answer };
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name && (err as { $metadata?: unknown }).$metadata) return { error: name };
        throw err;
      }
    },
    close: async () => client.destroy(),
  };
}

/** Nothing of the machine's AWS configuration or proxies: the explicit credentials, loopback only. */
function cleanEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true', NO_PROXY: '*', AWS_CONFIG_FILE: '/dev/null' };
}

interface Message {
  MessageId: string;
  ReceiptHandle: string;
  Attributes?: Record<string, string>;
}

class Mismatch extends Error {}
function expectThat(condition: boolean, what: string): void {
  if (!condition) throw new Mismatch(what);
}

/**
 * The scenario: each step is a row of docs/sqs.md's matrix; its outcome `ok`, the error code the step
 * looks for, or what went wrong. A run of 3 messages of one correlation id waits in the queue. Steps
 * that neither change the queue nor need another's answer run together: fewer rounds, the same outcomes
 * (a round of the AWS CLI is a process start).
 */
async function scenario(call: Call, queueName: string, published: string[]): Promise<Record<string, string>> {
  const outcomes: Record<string, string> = {};
  const step = async (name: string, run: () => Promise<string | void>) => {
    try {
      outcomes[name] = (await run()) ?? 'ok';
    } catch (err) {
      outcomes[name] = err instanceof Mismatch ? `mismatch: ${err.message}` : `failed: ${(err as Error).message}`;
    }
  };
  const ok = async (operation: string, params: Answer): Promise<Answer> => {
    const answer = await call(operation, params);
    if ('error' in answer) throw new Mismatch(`${operation}: ${answer.error}`);
    return answer.ok;
  };
  const errorOf = async (operation: string, params: Answer): Promise<string> => {
    const answer = await call(operation, params);
    if ('ok' in answer) throw new Mismatch(`${operation} succeeded`);
    return answer.error;
  };
  const receiveRun = async (): Promise<Message[]> => {
    const got: Message[] = [];
    const deadline = Date.now() + 20_000;
    while (got.length < published.length && Date.now() < deadline) {
      const answer = await ok('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, AttributeNames: ['All'] });
      got.push(...((answer.Messages as Message[] | undefined) ?? []));
    }
    expectThat(JSON.stringify(got.map((m) => m.MessageId)) === JSON.stringify(published), `received ${got.length} of the run, in order`);
    return got;
  };
  const batchOk = (answer: Answer, ids: string[]) =>
    expectThat(
      JSON.stringify(((answer.Successful as Array<{ Id: string }> | undefined) ?? []).map((e) => e.Id)) === JSON.stringify(ids) &&
        ((answer.Failed as unknown[] | undefined) ?? []).length === 0,
      `batch answered ${JSON.stringify(answer)}`,
    );

  let url = '';
  // Three alike calls at once: within one second, so botocore and the AWS CLI sign them alike.
  const thrice = <T>(call: () => Promise<T>) => Promise.all([call(), call(), call()]);
  await step('GetQueueUrl, 3 identical calls at once', async () => {
    const urls = (await thrice(() => ok('GetQueueUrl', { QueueName: queueName }))).map((answer) => answer.QueueUrl as string);
    expectThat(new Set(urls).size === 1 && urls[0]!.endsWith(`/v1/sqs/${queueName}`), `urls ${urls.join(' ')}`);
    url = urls[0]!;
  });
  // Nothing here changes the queue: the refusals are of the request, before any message is read.
  await Promise.all([
    step('GetQueueAttributes All, 3 identical calls at once', async () => {
      for (const answer of await thrice(() => ok('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] }))) {
        const attributes = answer.Attributes as Record<string, string>;
        expectThat(attributes.QueueArn === `arn:aws:sqs:${REGION}:000000000000:${queueName}`, `QueueArn ${attributes.QueueArn}`);
        expectThat(attributes.FifoQueue === 'true' && /^\d+$/.test(attributes.CreatedTimestamp ?? ''), 'FifoQueue, CreatedTimestamp');
      }
    }),
    step('GetQueueAttributes QueueArn', async () => {
      const attributes = (await ok('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['QueueArn'] })).Attributes;
      expectThat(JSON.stringify(attributes) === JSON.stringify({ QueueArn: `arn:aws:sqs:${REGION}:000000000000:${queueName}` }), JSON.stringify(attributes));
    }),
    step('error: ChangeMessageVisibility of a forged handle', () =>
      errorOf('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: 'bm90LWEtaGFuZGxl', VisibilityTimeout: 10 }),
    ),
    step('error: ReceiveMessage WaitTimeSeconds 21', () => errorOf('ReceiveMessage', { QueueUrl: url, WaitTimeSeconds: 21 })),
    step('error: GetQueueUrl of another queue', () => errorOf('GetQueueUrl', { QueueName: `not-${queueName}` })),
  ]);
  let first: Message[] = [];
  await step('ReceiveMessage long poll, All attributes', async () => {
    first = await receiveRun();
    const attributes = first[0]!.Attributes ?? {};
    for (const name of ['SequenceNumber', 'SenderId', 'ApproximateFirstReceiveTimestamp', 'MessageGroupId', 'ApproximateReceiveCount'])
      expectThat(name in attributes, `attribute ${name}`);
    expectThat(attributes.SenderId === SYSTEM_ID, `SenderId ${attributes.SenderId}`);
  });
  await step('ChangeMessageVisibility', async () => {
    await ok('ChangeMessageVisibility', { QueueUrl: url, ReceiptHandle: first[0]!.ReceiptHandle, VisibilityTimeout: 60 });
  });
  let again: Message[] = [];
  await step('ChangeMessageVisibilityBatch 0 on a received run', async () => {
    const entries = first.map((m, i) => ({ Id: `m${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }));
    batchOk(await ok('ChangeMessageVisibilityBatch', { QueueUrl: url, Entries: entries }), ['m0', 'm1', 'm2']);
    again = await receiveRun();
    expectThat(
      again.every((m) => m.Attributes?.ApproximateReceiveCount === '2'),
      'received a second time',
    );
  });
  await step('DeleteMessage', async () => {
    await ok('DeleteMessage', { QueueUrl: url, ReceiptHandle: again[0]!.ReceiptHandle });
  });
  await step('DeleteMessageBatch', async () => {
    const entries = again.slice(1).map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle }));
    batchOk(await ok('DeleteMessageBatch', { QueueUrl: url, Entries: entries }), ['d0', 'd1']);
  });
  // The queue is empty and stays so: a refused delete changes nothing.
  await Promise.all([
    step('ReceiveMessage long poll on an empty queue', async () => {
      const started = Date.now();
      const answer = await ok('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 });
      expectThat(((answer.Messages as unknown[] | undefined) ?? []).length === 0 && Date.now() - started >= 900, 'waited, nothing');
    }),
    step('error: DeleteMessage of a spent handle', () => errorOf('DeleteMessage', { QueueUrl: url, ReceiptHandle: first[1]!.ReceiptHandle })),
  ]);
  // The last steps: a purge marks the queue for 60 s, and the answer is the same however full it is.
  await step('PurgeQueue', async () => {
    await ok('PurgeQueue', { QueueUrl: url });
    const counts = (await ok('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))
      .Attributes as Record<string, string>;
    expectThat(counts.ApproximateNumberOfMessages === '0' && counts.ApproximateNumberOfMessagesNotVisible === '0', `counts ${JSON.stringify(counts)}`);
  });
  await step('error: PurgeQueue again within 60 s', () => errorOf('PurgeQueue', { QueueUrl: url }));
  return outcomes;
}

/** The matrix of docs/sqs.md: step → client → outcome, from its table between the conformance markers. */
function documentedMatrix(): Record<string, Record<string, string>> {
  const doc = readFileSync(MATRIX_DOC, 'utf8');
  const table = doc.split('<!-- conformance:start -->')[1]?.split('<!-- conformance:end -->')[0] ?? '';
  const rows = table
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replace(/^`|`$/g, '')),
    );
  const [header, , ...body] = rows;
  const clients = header!.slice(1);
  return Object.fromEntries(body.map(([stepName, ...cells]) => [stepName!, Object.fromEntries(clients.map((c, i) => [c, cells[i]!]))]));
}

/** A client's installer under deploy/local (a venv, the Go driver's build): what it prints, the path to run. */
function installed(script: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [path.join(REPO_ROOT, 'deploy', 'local', script), ...args], { encoding: 'utf8', timeout: 540_000 }, (err, stdout, stderr) => {
      // What it says of an install or a build (and its time) shows in the test's output.
      if (stderr) process.stderr.write(stderr);
      if (err) reject(err);
      else resolve(stdout.trim());
    });
  });
}

// Without a Go toolchain the aws-sdk-go client is skipped, without a JDK and Maven the aws-sdk-java-v1
// client, and said to be (sqs-clients.sh prints why).
const toolchain = (which: string) =>
  execFileSync('bash', [path.join(REPO_ROOT, 'deploy', 'local', 'sqs-clients.sh'), which], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
const GO_TOOLCHAIN = toolchain('go-toolchain');
const JAVA_TOOLCHAIN = toolchain('java-toolchain');
const RUN_CLIENTS = CLIENTS.filter((client) => (client !== 'aws-sdk-go' || GO_TOOLCHAIN !== '') && (client !== 'aws-sdk-java-v1' || JAVA_TOOLCHAIN !== ''));

let bus: RunningBus;
let tenants: TenantFixture;
let principals: PrincipalFixture;
let drivers: Record<Client, (reader: Credentials) => Driver>;
/** Each client's scenario, all started together by the first client's test; each test awaits its own. */
const runs = new Map<Client, Promise<Record<string, string>>>();

function runOf(client: Client): Promise<Record<string, string>> {
  if (runs.size === 0)
    for (const each of RUN_CLIENTS) {
      const run = (async () => {
        const { house, reader, published } = await queueWithRun();
        const driver = drivers[each](reader);
        try {
          // botocore 1.29 speaks the query protocol to SQS, boto3 1.44 AWS JSON: the run covers both.
          if (each === 'botocore-query') expect(await driver.hello).toEqual({ protocol: 'query' });
          if (each === 'boto3') expect(await driver.hello).toEqual({ protocol: 'json' });
          if (each === 'aws-sdk-go') expect(await driver.hello).toEqual({ sdk: expect.stringMatching(/^github\.com\/aws\/aws-sdk-go-v2\/service\/sqs@v1\./) });
          // The Java SDK v1's SQS client speaks AWS JSON 1.0 at the version pinned (its older releases, the query protocol).
          if (each === 'aws-sdk-java-v1') expect(await driver.hello).toEqual({ sdk: expect.stringMatching(/^1\.12\./), protocol: 'json' });
          return await scenario(driver.call, house.consumer.clientId, published);
        } finally {
          await driver.close();
        }
      })();
      // Awaited by the client's test; a failure is reported there, not as an unhandled rejection.
      run.catch(() => undefined);
      runs.set(each, run);
    }
  return runs.get(client)!;
}

beforeAll(async () => {
  // The venvs install once (later runs reuse them under .local/venvs) and the Go and Java drivers build
  // once (.local/sqs-go, .local/sqs-java), all at once; then the bus.
  const [boto3, botocore, aws, go, java] = await Promise.all([
    installed('boto3.sh'),
    installed('sqs-clients.sh', 'botocore'),
    installed('sqs-clients.sh', 'awscli'),
    RUN_CLIENTS.includes('aws-sdk-go') ? installed('sqs-clients.sh', 'go') : Promise.resolve(''),
    RUN_CLIENTS.includes('aws-sdk-java-v1') ? installed('sqs-clients.sh', 'java') : Promise.resolve(''),
  ]);
  bus = await startBus({ AWS_SIGV4_REGION: REGION });
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  principals = new PrincipalFixture(bus, REGION, ROLE_ARN);
  // The endpoint as docs/sqs.md gives it; botocore and the AWS CLI post to exactly this path, the Java
  // SDK v1 a call that names a queue to the queue's URL.
  const endpoint = `${bus.busUrl}/v1/sqs`;
  drivers = {
    boto3: (reader) => lineDriver(boto3, ['-c', PYTHON_DRIVER], { endpoint, region: REGION, ...reader }),
    'botocore-query': (reader) => lineDriver(botocore, ['-c', PYTHON_DRIVER], { endpoint, region: REGION, ...reader }),
    awscli: (reader) => awsCliDriver(aws, endpoint, reader),
    'aws-sdk-js': (reader) => sdkDriver(endpoint, reader),
    'aws-sdk-go': (reader) => lineDriver(go, [], { endpoint, region: REGION, ...reader }),
    'aws-sdk-java-v1': (reader) => lineDriver(java, [], { endpoint, region: REGION, ...reader }),
  };
}, 900_000);
afterAll(async () => {
  await Promise.allSettled(runs.values());
  await tenants?.close();
  await bus?.stop();
}, 150_000);

async function queueWithRun(): Promise<{ house: Tenant; reader: Credentials; published: string[] }> {
  const house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  const producerToken = await tenants.token(house.producer);
  const reader = await principals.verified(house.consumer.clientId, house.workspaceId);
  const correlationId = `c-${randomUUID()}`;
  const published: string[] = [];
  for (const type of ['telling.started', 'telling.exposed', 'telling.ended']) {
    const messageId = randomUUID();
    const body = JSON.stringify({
      ...(som.examples[type] as Record<string, unknown>),
      message_id: messageId,
      correlation_id: correlationId,
      occurred_at: new Date().toISOString(),
      system_id: SYSTEM_ID,
    });
    const res = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producerToken, body);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 202 });
    published.push(messageId);
  }
  // All three enqueued, so one receive leases the whole run.
  await deliveryCaughtUp(bus);
  return { house, reader, published };
}

describe('one SQS scenario, every client', () => {
  const outcomes: Partial<Record<Client, Record<string, string>>> = {};

  for (const client of CLIENTS) {
    (RUN_CLIENTS.includes(client) ? it : it.skip)(
      `${client} runs the scenario`,
      async () => {
        outcomes[client] = await runOf(client);
        mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
        writeFileSync(RESULTS_FILE, `${JSON.stringify(outcomes, null, 2)}\n`);
        const documented = documentedMatrix();
        expect(Object.fromEntries(Object.entries(outcomes[client]).map(([stepName, outcome]) => [stepName, { [client]: outcome }]))).toEqual(
          Object.fromEntries(Object.entries(documented).map(([stepName, cells]) => [stepName, { [client]: cells[client] }])),
        );
      },
      180_000,
    );
  }

  it('answers a query-protocol request in XML, and a refusal as an XML ErrorResponse (bus.json)', async () => {
    const { house, reader } = await queueWithRun();
    const send = async (body: string) => {
      const headers = await signedHeaders(bus, reader, '/v1/sqs', body, {
        region: REGION,
        service: 'sqs',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      });
      const answer = await fetchObserved(`${bus.busUrl}/v1/sqs`, { method: 'POST', headers, body });
      busApi.check('POST', '/v1/sqs', answer);
      return answer;
    };
    const url = await send(`Action=GetQueueUrl&Version=2012-11-05&QueueName=${house.consumer.clientId}`);
    expect([url.status, url.headers.get('content-type'), url.body]).toEqual([
      200,
      'text/xml; charset=utf-8',
      expect.stringMatching(
        new RegExp(
          `^<\\?xml version="1.0"\\?><GetQueueUrlResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><GetQueueUrlResult><QueueUrl>[^<]+/v1/sqs/${house.consumer.clientId}</QueueUrl></GetQueueUrlResult><ResponseMetadata><RequestId>[^<]+</RequestId></ResponseMetadata></GetQueueUrlResponse>$`,
        ),
      ),
    ]);
    const refused = await send('Action=GetQueueUrl&Version=2012-11-05&QueueName=nobody');
    expect([refused.status, refused.headers.get('content-type'), refused.body]).toEqual([
      400,
      'text/xml; charset=utf-8',
      expect.stringContaining('<Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>'),
    ]);
    const unknown = await send('Action=SendMessage&Version=2012-11-05&MessageBody=x');
    expect([unknown.status, unknown.body]).toEqual([400, expect.stringContaining('<Code>InvalidAction</Code>')]);
    // An action not served is InvalidAction before any of its parameters is read.
    const unserved = await send('Action=SetQueueAttributes&Version=2012-11-05&Attribute.1.Name=DelaySeconds&Attribute.1.Value=5');
    expect([unserved.status, unserved.body]).toEqual([400, expect.stringContaining('<Code>InvalidAction</Code>')]);
    const unsigned = await fetchObserved(`${bus.busUrl}/v1/sqs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body: 'Action=ListQueues&Version=2012-11-05',
    });
    busApi.check('POST', '/v1/sqs', unsigned);
    expect([unsigned.status, unsigned.headers.get('content-type'), unsigned.body]).toEqual([
      401,
      'text/xml; charset=utf-8',
      expect.stringContaining('<Code>MissingAuthenticationToken</Code>'),
    ]);
    const misspelt = await send(`Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=x&Attribute.1.Name=All`);
    expect([misspelt.status, misspelt.body]).toEqual([
      400,
      expect.stringContaining('<Code>InvalidParameterValue</Code><Message>Unknown parameter Attribute.1.Name'),
    ]);
  }, 60_000);
  // Last in the file: it spends the shared signed-request limit of this file's bus (its own Redis prefix).
  it('throttles past the shared AWS-signed limit with 429 RequestThrottled and Retry-After, in either protocol', async () => {
    const { house, reader } = await queueWithRun();
    const json = JSON.stringify({ QueueName: house.consumer.clientId });
    const form = `Action=GetQueueUrl&Version=2012-11-05&QueueName=${house.consumer.clientId}`;
    // A repeated signature is no replay (docs/auth.md): one signed request per protocol, sent many times.
    const signed = await Promise.all(
      [false, true].map(async (query) => {
        const body = query ? form : json;
        const headers = await signedHeaders(bus, reader, '/v1/sqs', body, {
          region: REGION,
          service: 'sqs',
          headers: query
            ? { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }
            : { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.GetQueueUrl' },
        });
        return { query, headers, body };
      }),
    );
    // Waves of 200 at once until both protocols were throttled (at most 5): a loaded machine that
    // spreads one wave over seconds still meets the limit in a later one.
    const answers: Array<{ query: boolean; answer: Awaited<ReturnType<typeof fetchObserved>> }> = [];
    const started = Date.now();
    for (let wave = 0; wave < 5 && new Set(answers.filter(({ answer }) => answer.status === 429).map(({ query }) => query)).size < 2; wave++) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 200 }, async (_, i) => {
            const { query, headers, body } = signed[i % 2]!;
            return { query, answer: await fetchObserved(`${bus.busUrl}/v1/sqs`, { method: 'POST', headers, body }) };
          }),
        )),
      );
    }
    const elapsedSeconds = Math.ceil((Date.now() - started) / 1000);
    const throttled = answers.filter(({ answer }) => answer.status === 429);
    // 50 a second and bursts of 100: no more got through than the windows the sending touched allow.
    expect(answers.filter(({ answer }) => answer.status === 200).length).toBeLessThanOrEqual(100 + 50 * (elapsedSeconds + 1));
    expect(answers.every(({ answer }) => answer.status === 200 || answer.status === 429)).toBe(true);
    for (const { query, answer } of throttled) {
      busApi.check('POST', '/v1/sqs', answer);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The host's limit answers before the door: in the request's protocol all the same.
      if (query)
        expect([answer.headers.get('content-type'), answer.body]).toEqual([
          'text/xml; charset=utf-8',
          expect.stringContaining('<Type>Sender</Type><Code>RequestThrottled</Code>'),
        ]);
      else {
        expect((answer.body as { __type: string }).__type).toBe('com.amazonaws.sqs#RequestThrottled');
        expect(answer.headers.get('x-amzn-query-error')).toBe('RequestThrottled;Sender');
      }
    }
    expect(new Set(throttled.map(({ query }) => query)).size).toBe(2);
  }, 60_000);
});
