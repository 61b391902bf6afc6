import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { som } from '@bus/schemas';
import { REPO_ROOT } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { PrincipalFixture, type Credentials } from './support/principals';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * The SQS door as clients other than @aws-sdk/client-sqs (test/sqs.test.ts) reach it: boto3, in a
 * project-local venv (deploy/local/boto3.sh), and botocore 1.29 on the query protocol
 * (deploy/local/sqs-clients.sh botocore). botocore signs few headers and adds its invocation id
 * after signing, so two calls alike within one second carry the same signature: the door must accept
 * them both, as AWS does (docs/auth.md, "AWS SigV4"). No retries: a refusal shows as an error.
 */
const REGION = 'eu-west-1';
const SYSTEM_ID = 'storyteller.web';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/bus-boto3-reader';
const MESSAGES = 5;

/** The client's settings from the JSON on stdin: loopback, static credentials, one attempt (no retries). */
const CLIENT_OPTIONS = `client_options = dict(
    endpoint_url=settings['endpoint'],
    region_name=settings['region'],
    aws_access_key_id=settings['accessKeyId'],
    aws_secret_access_key=settings['secretAccessKey'],
    config=Config(connect_timeout=10, read_timeout=10, retries={'total_max_attempts': 1, 'mode': 'standard'}),
)`;

/** Reads its settings as JSON on stdin; prints one JSON object: errors, attribute answers and what it received. */
const BOTO3_SCRIPT = `
import json, sys, time
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

settings = json.load(sys.stdin)
${CLIENT_OPTIONS}
client = boto3.client('sqs', **client_options)
out = {'errors': [], 'attributes': [], 'received': [], 'requestIds': []}

def attempt(name, call):
    try:
        return call()
    except Exception as err:  # every failure is reported, none retried
        out['errors'].append('%s: %s: %s' % (name, type(err).__name__, err))
        return None

answer = attempt('GetQueueUrl', lambda: client.get_queue_url(QueueName=settings['queueName']))
url = answer and answer['QueueUrl']
if url is not None:
    # The request id botocore reads (x-amzn-RequestId on AWS JSON), of an answer and of a refusal.
    out['requestIds'].append(answer['ResponseMetadata'].get('RequestId'))
    try:
        client.get_queue_url(QueueName='no-such-queue')
    except ClientError as err:
        out['requestIds'].append(err.response['ResponseMetadata'].get('RequestId'))
    for _ in range(4):
        answer = attempt('GetQueueAttributes', lambda: client.get_queue_attributes(QueueUrl=url, AttributeNames=['All']))
        if answer is not None:
            out['attributes'].append(answer['Attributes'].get('FifoQueue'))
    deadline = time.monotonic() + settings['deadlineSeconds']
    while len(out['received']) < settings['expected'] and time.monotonic() < deadline and len(out['errors']) == 0:
        answer = attempt('ReceiveMessage', lambda: client.receive_message(QueueUrl=url, WaitTimeSeconds=1, MaxNumberOfMessages=10))
        for message in (answer or {}).get('Messages', []):
            out['received'].append(json.loads(message['Body'])['message_id'])
            attempt('DeleteMessage', lambda: client.delete_message(QueueUrl=url, ReceiptHandle=message['ReceiptHandle']))
print(json.dumps(out))
`;

interface Boto3Outcome {
  errors: string[];
  attributes: Array<string | null>;
  received: string[];
  requestIds: Array<string | null>;
}

/**
 * botocore 1.29 on the query protocol: the calls its serializer writes in a way of its own (an empty
 * list as the list's bare name, `Entries=`) and an error that quotes a character XML cannot hold.
 * Prints one JSON object: per call its answer's members, or the exception's name, or a failure that is
 * no answer of the door (a parse error).
 */
const QUERY_SCRIPT = `
import json, sys
import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError

settings = json.load(sys.stdin)
${CLIENT_OPTIONS}
client = botocore.session.get_session().create_client('sqs', **client_options)
out = {'protocol': client.meta.service_model.protocol}

def outcome(call):
    try:
        answer = call()
        return {'ok': sorted(k for k in answer if k != 'ResponseMetadata'), 'requestId': answer['ResponseMetadata'].get('RequestId') is not None}
    except ClientError as err:
        name = type(err).__name__
        return {'error': name if name != 'ClientError' else err.response['Error']['Code']}
    except Exception as err:
        return {'failed': '%s: %s' % (type(err).__name__, err)}

url = client.get_queue_url(QueueName=settings['queueName'])['QueueUrl']
out['deleteBatchOfNone'] = outcome(lambda: client.delete_message_batch(QueueUrl=url, Entries=[]))
out['visibilityBatchOfNone'] = outcome(lambda: client.change_message_visibility_batch(QueueUrl=url, Entries=[]))
out['receiveNoAttributeNames'] = outcome(lambda: client.receive_message(QueueUrl=url, AttributeNames=[], WaitTimeSeconds=0))
out['attributesNoNames'] = outcome(lambda: client.get_queue_attributes(QueueUrl=url, AttributeNames=[]))
out['controlCharacterQuoted'] = outcome(lambda: client.get_queue_attributes(QueueUrl=url, AttributeNames=['A\\x01B']))
print(json.dumps(out))
`;

let python: string;
let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let producerToken: string;
let reader: Credentials;

beforeAll(async () => {
  // Installs boto3 once (later runs reuse the venv), then the bus.
  python = execFileSync('bash', [path.join(REPO_ROOT, 'deploy', 'local', 'boto3.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 240_000,
  }).trim();
  bus = await startBus({ AWS_SIGV4_REGION: REGION });
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  producerToken = await tenants.token(house.producer);
  reader = await new PrincipalFixture(bus, REGION, ROLE_ARN).verified(house.consumer.clientId, house.workspaceId);
}, 300_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

function runPython<T>(interpreter: string, script: string, settings: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      interpreter,
      ['-c', script],
      // Nothing of the machine's AWS configuration or proxies: the explicit credentials, loopback only.
      { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true', NO_PROXY: '*' }, timeout: 45_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`the python script failed: ${err.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout) as T);
        } catch {
          reject(new Error(`the python script printed no JSON:\n${stdout}\n${stderr}`));
        }
      },
    );
    child.stdin?.end(JSON.stringify(settings));
  });
}

describe('the SQS door driven by boto3', () => {
  it('answers repeated calls (one signature within a second) and a receive/delete loop gets every message exactly once', async () => {
    const published: string[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const messageId = randomUUID();
      const body = JSON.stringify({
        ...(som.examples['story.context'] as Record<string, unknown>),
        message_id: messageId,
        correlation_id: `c-${randomUUID()}`,
        occurred_at: new Date().toISOString(),
        system_id: SYSTEM_ID,
      });
      const res = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/messages`, producerToken, body);
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 202 });
      published.push(messageId);
    }

    const outcome = await runPython<Boto3Outcome>(python, BOTO3_SCRIPT, {
      // The endpoint as docs/delivery.md gives it: botocore posts to exactly this path, without a slash.
      endpoint: `${bus.busUrl}/v1/sqs`,
      region: REGION,
      accessKeyId: reader.accessKeyId,
      secretAccessKey: reader.secretAccessKey,
      queueName: house.consumer.clientId,
      expected: MESSAGES,
      deadlineSeconds: 30,
    });
    expect(outcome.errors).toEqual([]);
    expect(outcome.attributes).toEqual(['true', 'true', 'true', 'true']);
    expect([...outcome.received].sort()).toEqual([...published].sort());
    expect(outcome.requestIds).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  }, 60_000);
});

describe('the SQS door driven by botocore 1.29 (the AWS query protocol)', () => {
  it('reads an empty list as botocore writes it, and quotes a character XML cannot hold in an error botocore parses', async () => {
    const queryPython = execFileSync('bash', [path.join(REPO_ROOT, 'deploy', 'local', 'sqs-clients.sh'), 'botocore'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 240_000,
    }).trim();
    const outcome = await runPython<Record<string, unknown>>(queryPython, QUERY_SCRIPT, {
      endpoint: `${bus.busUrl}/v1/sqs`,
      region: REGION,
      accessKeyId: reader.accessKeyId,
      secretAccessKey: reader.secretAccessKey,
      queueName: house.consumer.clientId,
    });
    expect(outcome).toEqual({
      protocol: 'query',
      deleteBatchOfNone: { error: 'EmptyBatchRequest' },
      visibilityBatchOfNone: { error: 'EmptyBatchRequest' },
      receiveNoAttributeNames: { ok: expect.any(Array), requestId: true },
      attributesNoNames: { ok: [], requestId: true },
      controlCharacterQuoted: { error: 'InvalidAttributeName' },
    });
  }, 300_000);
});
