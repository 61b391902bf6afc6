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
 * project-local venv (deploy/local/boto3.sh). botocore signs few headers and adds its invocation id
 * after signing, so two calls alike within one second carry the same signature: the door must accept
 * them both, as AWS does (docs/auth.md, "AWS SigV4"). No retries: a refusal shows as an error.
 */
const REGION = 'eu-west-1';
const SYSTEM_ID = 'storyteller.web';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/bus-boto3-reader';
const MESSAGES = 5;

/** Reads its settings as JSON on stdin; prints one JSON object: errors, attribute answers and what it received. */
const BOTO3_SCRIPT = `
import json, sys, time
import boto3
from botocore.config import Config

settings = json.load(sys.stdin)
client = boto3.client(
    'sqs',
    endpoint_url=settings['endpoint'],
    region_name=settings['region'],
    aws_access_key_id=settings['accessKeyId'],
    aws_secret_access_key=settings['secretAccessKey'],
    config=Config(connect_timeout=10, read_timeout=10, retries={'total_max_attempts': 1, 'mode': 'standard'}),
)
out = {'errors': [], 'attributes': [], 'received': []}

def attempt(name, call):
    try:
        return call()
    except Exception as err:  # every failure is reported, none retried
        out['errors'].append('%s: %s: %s' % (name, type(err).__name__, err))
        return None

url = attempt('GetQueueUrl', lambda: client.get_queue_url(QueueName=settings['queueName'])['QueueUrl'])
if url is not None:
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
}

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

function runBoto3(settings: Record<string, unknown>): Promise<Boto3Outcome> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      python,
      ['-c', BOTO3_SCRIPT],
      // Nothing of the machine's AWS configuration or proxies: the explicit credentials, loopback only.
      { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', AWS_EC2_METADATA_DISABLED: 'true', NO_PROXY: '*' }, timeout: 45_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`boto3 script failed: ${err.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout) as Boto3Outcome);
        } catch {
          reject(new Error(`boto3 script printed no JSON:\n${stdout}\n${stderr}`));
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

    const outcome = await runBoto3({
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
  }, 60_000);
});
