import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, freePort, startNodeProcess, waitForHttp, type ServiceProcess } from '@bus/testing';
import { startBus, startReplica, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { PrincipalFixture, signedHeaders, type Credentials } from './support/principals';
import { TenantFixture, type Tenant } from './support/tenants';

const busApi = createOpenApiChecker(openapi.bus);

/** Resolves once the slow route has taken a request: signalled after this, the request is in flight. */
const slowRequestStarted = (proc: ServiceProcess) =>
  eventually(
    () => proc.output(),
    (output) => output.includes('"msg":"slow request started"'),
    { timeoutMs: 5_000, what: 'the slow request in flight' },
  );

/** Whether a new request to `url` is refused (the listener closed) rather than answered. */
async function refused(url: string): Promise<boolean> {
  try {
    await (await fetch(url)).arrayBuffer();
    return false;
  } catch {
    return true;
  }
}

describe('SIGTERM', () => {
  it('lets an in-flight request finish, refuses new connections, then exits 0', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const inFlight = fetch(`${url}/slow?ms=1500`);
    await slowRequestStarted(proc);
    proc.child.kill('SIGTERM');

    await eventually(
      () => refused(`${url}/healthz`),
      (isRefused) => isRefused,
      { timeoutMs: 1_000, what: 'new connections refused' },
    );
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ finished: true });
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/"msg":"clients closed"/);
    // The finished request's keep-alive connection was closed with it: the drain did not wait out
    // its timeout (10 s in the fixture) for a connection with nothing left to do.
    expect(proc.output()).not.toMatch(/drain timeout/);
  }, 20_000);

  it('cuts requests still running when the drain timeout ends', async () => {
    const port = await freePort();
    const proc = startNodeProcess('test/fixtures/slow-server.js', { PORT: String(port), DRAIN_MS: '300' });
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, { process: proc });

    const tooSlow = fetch(`${url}/slow?ms=10000`);
    await slowRequestStarted(proc);
    proc.child.kill('SIGTERM');
    await expect(tooSlow).rejects.toThrow();
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/drain timeout/);
  }, 20_000);
});

describe('SIGTERM on pull-api', () => {
  const REGION = 'eu-west-1';
  let bus: RunningBus;
  let tenants: TenantFixture;
  let house: Tenant;
  let consumerToken: string;
  let reader: Credentials;

  // The all-in-one issues the tokens and verifies the SQS principal; each case SIGTERMs a pull-api
  // process of its own on the same environment.
  beforeAll(async () => {
    bus = await startBus({ AWS_SIGV4_REGION: REGION });
    tenants = await TenantFixture.create(bus);
    house = await tenants.tenant({ systemIds: ['storyteller.web'], messageTypes: Object.keys(som.examples) });
    consumerToken = await tenants.token(house.consumer);
    reader = await new PrincipalFixture(bus, REGION, 'arn:aws:iam::123456789012:role/bus-reader').verified(house.consumer.clientId, house.workspaceId);
  }, 180_000);
  afterAll(async () => {
    await tenants?.close();
    await bus?.stop();
  }, 30_000);

  /** A ReceiveMessage long poll on the SQS door of the process at `url`, signed as the SDK signs it. */
  async function sqsReceive(url: string, waitSeconds: number) {
    const body = JSON.stringify({ QueueUrl: `${bus.env.BUS_BASE_URL}/v1/sqs/${house.consumer.clientId}`, WaitTimeSeconds: waitSeconds });
    const headers = await signedHeaders({ ...bus, busUrl: url }, reader, '/v1/sqs/', body, {
      region: REGION,
      service: 'sqs',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
    });
    const answer = await fetchObserved(`${url}/v1/sqs/`, { method: 'POST', headers, body });
    busApi.check('POST', '/v1/sqs/', answer);
    return answer;
  }

  it.each(['100ms', '60s'])(
    'answers every parked long poll on both doors with an empty 200, then exits 0 (drain timeout %s)',
    async (drain) => {
      const pullApi = await startReplica('pull-api', bus.env, { SHUTDOWN_DRAIN_TIMEOUT: drain, LOG_LEVEL: 'debug' });
      const path = `/v1/tenants/${house.workspaceId}/consumers/${house.consumer.clientId}/messages?wait_seconds=20`;
      const pulled = bearerCall({ ...bus, busUrl: pullApi.url }, 'GET', path, consumerToken);
      const received = sqsReceive(pullApi.url, 20);
      await eventually(
        () => pullApi.process.output(),
        (output) => (output.match(/"msg":"long poll waiting"/g) ?? []).length >= 2,
        { timeoutMs: 10_000, what: 'both long polls parked' },
      );

      pullApi.process.child.kill('SIGTERM');
      const [pull, sqs] = await Promise.all([pulled, received]);
      expect([pull.status, pull.body]).toEqual([200, { messages: [] }]);
      expect([sqs.status, sqs.body]).toEqual([200, {}]);
      expect(await pullApi.process.exited).toBe(0);
      // Answered by the drain, not cut by its timeout.
      expect(pullApi.process.output()).not.toMatch(/drain timeout/);
    },
    60_000,
  );
});
