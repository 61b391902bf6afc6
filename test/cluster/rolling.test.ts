import { spawn } from 'node:child_process';
import { eventually, requireEnv } from '@bus/testing';
import {
  COMPONENTS,
  REPLICATED,
  busCall,
  busFetch,
  checkBusAnswer,
  clusterIpUrl,
  evictPod,
  kubectl,
  message,
  provisionTenant,
  readyPodNames,
  replicasReady,
  resourceName,
  token,
  type BusUrls,
  type Component,
  type Envelope,
  type Received,
} from './cluster';

/**
 * A rolling change without loss, at production's shape (gateway, delivery and pull-api at two replicas
 * with their HPA and PodDisruptionBudget): while a producer publishes on several correlation ids and a
 * consumer receives and acks, the release is upgraded with a configuration change that rolls every
 * Deployment, then one pod of each replicated component is evicted as a node drain evicts it (its
 * budget refuses the second at once). Clients reach the bus the way in-cluster clients do, through the Services' ClusterIPs
 * (kube-proxy sends new connections to ready pods only), and behave as correct clients: a publish
 * whose answer was lost is sent again with the same message_id (the bus answers 200 duplicate when it
 * had accepted it), a receive or ack that failed is made again.
 *
 * Asserted: every message the bus accepted is received, none twice unless its ack was lost, and per
 * correlation id in the order it was accepted; every Deployment's pods were replaced; every 5xx on
 * the way was a 503, the bus's documented retryable answer.
 */

const SYSTEM_ID = 'storyteller.web';
const GROUPS = 6;
/** How far a correlation id's publisher may run ahead of the consumer: traffic throughout the roll, without flooding two cores. */
const WINDOW = 5;

let urls: BusUrls;

beforeAll(async () => {
  urls = {
    auth: await clusterIpUrl('auth'),
    gateway: await clusterIpUrl('gateway'),
    pullApi: await clusterIpUrl('pull-api'),
    portal: await clusterIpUrl('portal'),
  };
  for (const component of REPLICATED) await replicasReady(component);
}, 600_000);

/** Runs `release.sh bus <args>` (helm upgrade --wait) to its end. */
function upgradeRelease(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [requireEnv('CLUSTER_RELEASE_SCRIPT'), 'bus', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`helm upgrade exited with ${code}:\n${output}`))));
  });
}

const podNames = async (component: Component) =>
  (await kubectl('get', 'pods', '-l', `app.kubernetes.io/component=${component}`, '-o', 'jsonpath={.items[*].metadata.name}')).split(/\s+/).filter(Boolean);

/**
 * Sends a request again after a network failure, a 5xx (a pod going away under it) or a 429 (a slow
 * roll keeps the test's own requests coming past its connection's allowance) until another answer
 * comes, then checks that answer against the bus's OpenAPI document.
 */
async function persistently(method: string, base: string, path: string, bearer: string, counters: Counters, body?: unknown) {
  let attempts = 0;
  const answer = await eventually(
    async () => {
      attempts += 1;
      const res = await busFetch(base, method, path, bearer, body);
      if (res.status === 429) counters.limited += 1;
      if (res.status >= 500) counters.serverErrors.set(res.status, (counters.serverErrors.get(res.status) ?? 0) + 1);
      return res;
    },
    (res) => res.status < 500 && res.status !== 429,
    { timeoutMs: 90_000, intervalMs: 100, what: `an answer to ${method} ${path} other than a failure, a 5xx or a 429` },
  );
  counters.retries += attempts - 1;
  return checkBusAnswer(method, path, answer);
}

interface Counters {
  /** Requests sent again (after a failure, 5xx or 429) and acks that may not have landed. */
  retries: number;
  /** 429 answers among them. */
  limited: number;
  /** 5xx answers among them, by status. */
  serverErrors: Map<number, number>;
}

/**
 * Evicts one ready pod of a replicated component under traffic; the second, evicted at once, is
 * refused by the budget (maxUnavailable 1) while the first's replacement is not ready. Then waits for
 * both replicas to be ready again.
 */
async function evictOneOfTwo(component: Component): Promise<void> {
  await replicasReady(component);
  const [first, second] = await readyPodNames(component);
  // The disruption controller counts the healthy pods a moment after they are ready: until then it allows no eviction.
  await eventually(
    () => evictPod(first!),
    (outcome) => outcome === 'evicted',
    {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: `the eviction of ${first} allowed`,
    },
  );
  expect({ component, second: await evictPod(second!) }).toEqual({ component, second: 'refused' });
  await replicasReady(component);
}

it('upgrades every Deployment while publishing and receiving, and no accepted message is lost, doubled or reordered', async () => {
  const tenant = await provisionTenant(urls, SYSTEM_ID);
  const producerToken = await token(urls.auth, tenant.producer);
  const consumerToken = await token(urls.auth, tenant.consumer);
  const before = new Map<Component, string[]>();
  for (const c of Object.keys(COMPONENTS) as Component[]) before.set(c, await podNames(c));

  const counters: Counters = { retries: 0, limited: 0, serverErrors: new Map() };
  const accepted = new Map<string, string[]>(); // correlation id → message ids in acceptance order
  const receivedOrder = new Map<string, string[]>(); // correlation id → message ids in first-receipt order
  let rolling = true;
  const publisher = async (group: number) => {
    const correlationId = `rolling-${group}-${Date.now()}`;
    const ids: string[] = [];
    accepted.set(correlationId, ids);
    while (rolling) {
      const m: Envelope = message('story.context', SYSTEM_ID, correlationId);
      const res = await persistently('POST', urls.gateway, `/v1/tenants/${tenant.workspaceId}/messages`, producerToken, counters, m);
      // 202, or 200 duplicate when an earlier attempt was accepted and its answer lost.
      expect([200, 202]).toContain(res.status);
      ids.push(m.message_id);
      // Flow control: at most WINDOW messages of a correlation id ahead of the consumer.
      await eventually(
        () => ids.length - (receivedOrder.get(correlationId)?.length ?? 0),
        (ahead) => ahead < WINDOW,
        {
          timeoutMs: 180_000,
          intervalMs: 20,
          what: `the consumer within ${WINDOW} messages of ${correlationId}`,
        },
      );
    }
  };

  const receipts = new Map<string, number>();
  const ackLost = new Set<string>();
  const consumerPath = `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.client_id}`;
  const receiveOnce = async () => {
    const res = await persistently('GET', urls.pullApi, `${consumerPath}/messages?wait_seconds=1&max_messages=10`, consumerToken, counters);
    expect(res.status).toBe(200);
    const batch = (res.body as { messages: Received[] }).messages;
    for (const r of batch) {
      receipts.set(r.message_id, (receipts.get(r.message_id) ?? 0) + 1);
      if (receipts.get(r.message_id) === 1) {
        const order = receivedOrder.get(r.correlation_id) ?? [];
        order.push(r.message_id);
        receivedOrder.set(r.correlation_id, order);
      }
    }
    if (batch.length === 0) return;
    try {
      const ack = await busCall(urls.pullApi, 'POST', `${consumerPath}/ack`, consumerToken, { receipt_handles: batch.map((r) => r.receipt_handle) });
      if (ack.status !== 200) throw new Error(`ack answered ${ack.status}`);
    } catch {
      // The ack may or may not have landed: these messages may come again when their lease ends.
      for (const r of batch) ackLost.add(r.message_id);
      counters.retries += 1;
    }
  };
  let consuming = true;
  const consumer = (async () => {
    while (consuming) await receiveOnce();
  })();

  const publishers = Array.from({ length: GROUPS }, (_, g) => publisher(g));
  // Some traffic before the roll starts, so the roll happens under load.
  await eventually(
    () => [...accepted.values()].reduce((n, ids) => n + ids.length, 0),
    (n) => n >= GROUPS * 5,
    { timeoutMs: 60_000, what: 'traffic before the roll' },
  );
  const rollStarted = Date.now();
  // A configuration change (the ConfigMap's checksum is in every pod template): a value other than the current one.
  const current = await kubectl('get', 'configmap', 'message-bus-config', '-o', 'jsonpath={.data.IDENTITY_CACHE_TTL}');
  await upgradeRelease(['--set', `config.identityCacheTtl=${current === '7s' ? '8s' : '7s'}`]);
  const rollSeconds = Math.round((Date.now() - rollStarted) / 1000);
  const evictionsStarted = Date.now();
  for (const component of REPLICATED) await evictOneOfTwo(component);
  const evictionSeconds = Math.round((Date.now() - evictionsStarted) / 1000);
  rolling = false;
  await Promise.all(publishers);

  const total = [...accepted.values()].reduce((n, ids) => n + ids.length, 0);
  const allAccepted = new Set([...accepted.values()].flat());
  await eventually(
    () => [...allAccepted].filter((id) => !receipts.has(id)).length,
    (missing) => missing === 0,
    { timeoutMs: 120_000, intervalMs: 500, what: `all ${total} accepted messages received` },
  );
  consuming = false;
  await consumer;
  console.log(
    `rolling upgrade: ${rollSeconds} s, evictions: ${evictionSeconds} s, ${total} messages accepted on ${GROUPS} correlation ids, ${counters.retries} requests sent again (${counters.limited} after a 429; 5xx by status: ${JSON.stringify(Object.fromEntries(counters.serverErrors))}), ${ackLost.size} acks lost`,
  );
  expect([...counters.serverErrors.keys()].filter((status) => status !== 503)).toEqual([]);

  for (const [correlationId, ids] of accepted) expect({ correlationId, order: receivedOrder.get(correlationId) ?? [] }).toEqual({ correlationId, order: ids });
  const unexpected = [...receipts.keys()].filter((id) => !allAccepted.has(id));
  expect(unexpected).toEqual([]);
  const doubled = [...receipts].filter(([id, n]) => n > 1 && !ackLost.has(id));
  expect(doubled).toEqual([]);
  // helm --wait returned when the new pods were ready; the old ones may still be draining.
  for (const c of Object.keys(COMPONENTS) as Component[]) {
    const old = before.get(c)!;
    const after = await eventually(
      () => podNames(c),
      (pods) => pods.length > 0 && pods.every((p) => !old.includes(p)),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: `${resourceName(c)}'s pods replaced`,
      },
    );
    expect(after).not.toEqual(expect.arrayContaining(old));
  }
}, 600_000);
