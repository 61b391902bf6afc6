import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { openapi, som } from '@bus/schemas';
import { createOpenApiChecker, eventually, fetchObserved, requireEnv } from '@bus/testing';

/**
 * The cluster tier's view of the installed release (deploy/cluster/test.sh exports the environment):
 * kubectl against the tier's cluster, the bus's Services reached by port-forward (as `skaffold dev`
 * does) or by their ClusterIP from the node (as clients inside the cluster do), and tenants made
 * through the portal's admin API with the operator credentials of the generated Secret.
 */

const run = promisify(execFile);
export const NAMESPACE = requireEnv('CLUSTER_NAMESPACE');
const KUBECTL = requireEnv('CLUSTER_KUBECTL');
const busApi = createOpenApiChecker(openapi.bus);
const adminApi = createOpenApiChecker(openapi.admin);

/** The chart's Deployments/Services (fullnameOverride message-bus) and the port each serves on. */
export const COMPONENTS = { auth: 8081, gateway: 8082, 'pull-api': 8083, delivery: 8084, catalogue: 8091, portal: 8092 } as const;
export type Component = keyof typeof COMPONENTS;
export const resourceName = (component: Component) => `message-bus-${component}`;

export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(KUBECTL, ['--namespace', NAMESPACE, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

export async function secretValue(secret: string, key: string): Promise<string> {
  const encoded = await kubectl('get', 'secret', secret, '-o', `jsonpath={.data.${key}}`);
  return Buffer.from(encoded, 'base64').toString('utf8');
}

export interface Forward {
  url: string;
  stop(): Promise<void>;
}

/** `kubectl port-forward svc/<name> :<port>` on a free local port. */
export async function portForward(target: string, port: number): Promise<Forward> {
  const child: ChildProcess = spawn(KUBECTL, ['--namespace', NAMESPACE, 'port-forward', target, `:${port}`, '--address', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const localPort = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output);
      if (found) resolve(Number(found[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`port-forward ${target} exited with ${code}: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${localPort}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The components production runs replicated (the tier's values give them two replicas, an HPA and a PodDisruptionBudget). */
export const REPLICATED: Component[] = ['gateway', 'delivery', 'pull-api'];

/** Waits until a component's Deployment has `count` ready replicas (an HPA scales a new Deployment up to its minimum). */
export async function replicasReady(component: Component, count = 2): Promise<void> {
  await eventually(
    () => kubectl('get', 'deployment', resourceName(component), '-o', 'jsonpath={.status.readyReplicas}/{.status.replicas}'),
    (seen) => seen === `${count}/${count}`,
    { timeoutMs: 180_000, intervalMs: 1000, what: `${resourceName(component)} at ${count} ready replicas (ready/replicas)` },
  );
}

/** A component's pods that are ready and not terminating. */
export async function readyPodNames(component: Component): Promise<string[]> {
  const pods = JSON.parse(await kubectl('get', 'pods', '-l', `app.kubernetes.io/component=${component}`, '-o', 'json')) as {
    items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { conditions?: Array<{ type: string; status: string }> } }>;
  };
  return pods.items
    .filter((p) => !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((p) => p.metadata.name);
}

/**
 * Evicts a pod through the Eviction API, as a node drain does (a plain delete ignores disruption
 * budgets): 'evicted', or 'refused' when its PodDisruptionBudget allows no disruption now (HTTP 429).
 */
export async function evictPod(pod: string): Promise<'evicted' | 'refused'> {
  const eviction = JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NAMESPACE } });
  const child = spawn(KUBECTL, ['create', '--raw', `/api/v1/namespaces/${NAMESPACE}/pods/${pod}/eviction`, '-f', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  child.stdin.end(eviction);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code === 0) return 'evicted';
  if (/disruption budget|TooManyRequests|429/i.test(output)) return 'refused';
  throw new Error(`eviction of ${pod} failed (exit ${code}): ${output}`);
}

/** http://<ClusterIP>:<port> of a component's Service: kube-proxy balances over its ready pods. */
export async function clusterIpUrl(component: Component): Promise<string> {
  const ip = await kubectl('get', 'service', resourceName(component), '-o', 'jsonpath={.spec.clusterIP}');
  return `http://${ip}:${COMPONENTS[component]}`;
}

/** Where each kind of request goes: the routes are split over the components' Services. */
export interface BusUrls {
  auth: string;
  gateway: string;
  pullApi: string;
  portal: string;
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export interface Tenant {
  workspaceId: string;
  producer: { client_id: string; client_secret: string };
  consumer: { client_id: string; client_secret: string };
}

/** A house with one workspace and one app allowed every SOM message type from `systemId`, made through the admin API. */
export async function provisionTenant(urls: BusUrls, systemId: string): Promise<Tenant> {
  const operator = basic(await secretValue('message-bus-dev', 'OPERATOR_CLIENT_ID'), await secretValue('message-bus-dev', 'OPERATOR_CLIENT_SECRET'));
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await fetchObserved(`${urls.portal}${path}`, {
      method,
      headers: { Authorization: operator, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    adminApi.check(method, path, res);
    if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  };
  const organisation = await admin('POST', '/api/admin/organisations', { name: `Cluster house ${randomUUID()}`, kind: 'house', quota: { tier: 'high' } });
  const workspace = await admin('POST', '/api/admin/workspaces', { organisation_id: organisation.id, name: 'Cluster tier' });
  const app = await admin('POST', '/api/admin/apps', { workspace_id: workspace.id, name: 'Cluster tier' });
  await admin('PUT', `/api/admin/apps/${String(app.id)}/permissions`, { system_ids: [systemId], message_types: Object.keys(som.examples) });
  const producer = await admin('POST', '/api/admin/connections', { app_id: app.id, kind: 'producer' });
  const consumer = await admin('POST', '/api/admin/connections', { app_id: app.id, kind: 'consumer' });
  return {
    workspaceId: String(workspace.id),
    producer: producer as unknown as Tenant['producer'],
    consumer: consumer as unknown as Tenant['consumer'],
  };
}

/** Calls a bus route; the answer is not checked yet (see busCall). */
export function busFetch(base: string, method: string, path: string, bearer: string, body?: unknown) {
  return fetchObserved(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Checks an answer of the bus against its OpenAPI document. */
export function checkBusAnswer(method: string, path: string, response: Awaited<ReturnType<typeof fetchObserved>>) {
  busApi.check(method, path, response);
  return response;
}

/** Calls a bus route, the answer checked against the bus's OpenAPI document. */
export async function busCall(base: string, method: string, path: string, bearer: string, body?: unknown) {
  return checkBusAnswer(method, path, await busFetch(base, method, path, bearer, body));
}

/** An access token from the token route (client credentials), retried while the token service starts. */
export async function token(authUrl: string, client: { client_id: string; client_secret: string }): Promise<string> {
  const res = await eventually(
    () =>
      fetchObserved(`${authUrl}/v1/oauth/token`, {
        method: 'POST',
        headers: { Authorization: basic(client.client_id, client.client_secret), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      }),
    // A new connection reaches the token service within IDENTITY_CACHE_TTL.
    (r) => r.status === 200,
    { timeoutMs: 30_000, what: 'a token' },
  );
  busApi.check('POST', '/v1/oauth/token', res);
  return (res.body as { access_token: string }).access_token;
}

export type Envelope = Record<string, unknown> & { message_id: string; correlation_id: string; message_type: string };

/** The SOM example of `type` as a new message. */
export function message(type: string, systemId: string, correlationId = `c-${randomUUID()}`): Envelope {
  return {
    ...(som.examples[type] as Record<string, unknown>),
    message_id: randomUUID(),
    message_type: type,
    correlation_id: correlationId,
    system_id: systemId,
    occurred_at: new Date().toISOString(),
  };
}

/**
 * One message of every SOM type: the examples, which tell one story in this order, with fresh message
 * ids and a fresh correlation id (their cross-references, e.g. a warning's trigger, follow along).
 */
export function storyOfEveryType(systemId: string): Envelope[] {
  const examples = Object.values(som.examples) as Envelope[];
  let text = JSON.stringify(examples);
  for (const example of examples) text = text.replaceAll(`"${example.message_id}"`, `"${randomUUID()}"`);
  text = text.replaceAll(`"${examples[0]!.correlation_id}"`, `"story-${randomUUID()}"`);
  const occurredAt = new Date().toISOString();
  return (JSON.parse(text) as Envelope[]).map((m) => ({ ...m, system_id: systemId, occurred_at: occurredAt }));
}

export interface Received {
  receipt_handle: string;
  message_id: string;
  message_type: string;
  correlation_id: string;
  envelope: Envelope;
}
