import { readFileSync } from 'node:fs';
import { som } from '@bus/schemas';
import { eventually, fetchObserved, requireEnv } from '@bus/testing';
import {
  COMPONENTS,
  busCall,
  kubectl,
  storyOfEveryType,
  portForward,
  provisionTenant,
  REPLICATED,
  replicasReady,
  resourceName,
  token,
  type BusUrls,
  type Component,
  type Forward,
  type Received,
  type Tenant,
} from './cluster';

/**
 * The chart as `skaffold dev` installs it, on a real single-node cluster (deploy/cluster/test.sh has
 * installed the dev dependencies and the release, hooks on, and run `helm test`): what a platform team
 * sees through the Services' port-forwards, and the network safety of the cluster itself.
 */

const SYSTEM_ID = 'storyteller.web';
const forwards = new Map<Component, Forward>();
let urls: BusUrls;
let tenant: Tenant;

beforeAll(async () => {
  for (const component of Object.keys(COMPONENTS) as Component[]) {
    forwards.set(component, await portForward(`service/${resourceName(component)}`, COMPONENTS[component]));
  }
  const url = (c: Component) => forwards.get(c)!.url;
  urls = { auth: url('auth'), gateway: url('gateway'), pullApi: url('pull-api'), portal: url('portal') };
  tenant = await provisionTenant(urls, SYSTEM_ID);
}, 120_000);
afterAll(async () => {
  await Promise.all([...forwards.values()].map((f) => f.stop()));
});

describe('network safety', () => {
  const inRange = (ip: string, cidr: string) => {
    const [base, bits] = cidr.split('/') as [string, string];
    const toInt = (a: string) => a.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
    const mask = Number(bits) === 0 ? 0 : 2 ** 32 - 2 ** (32 - Number(bits));
    return (toInt(ip) & mask) >>> 0 === (toInt(base) & mask) >>> 0;
  };
  const podCidr = requireEnv('CLUSTER_POD_CIDR');
  const serviceCidr = requireEnv('CLUSTER_SERVICE_CIDR');

  it('the CNI configuration routes the pod and Service ranges only: no default route, no masquerading', () => {
    const config = JSON.parse(readFileSync(requireEnv('CLUSTER_CNI_CONFIG'), 'utf8')) as { plugins: Array<Record<string, unknown>> };
    const bridge = config.plugins.find((p) => p.type === 'bridge')!;
    expect(bridge.ipMasq).toBe(false);
    const routes = (bridge.ipam as { routes: Array<{ dst: string }> }).routes.map((r) => r.dst);
    expect(routes.sort()).toEqual([podCidr, serviceCidr].sort());
    expect(routes).not.toContain('0.0.0.0/0');
  });

  it('a bus pod has routes to the pod and Service ranges only', async () => {
    // /proc/net/route: destination and mask as little-endian hex.
    const table = await kubectl('exec', `deployment/${resourceName('gateway')}`, '--', 'cat', '/proc/net/route');
    const hexIp = (hex: string) => [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
    const routes = table
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .map((f) => ({
        destination: hexIp(f[1]!),
        bits: hexIp(f[7]!)
          .split('.')
          .reduce((n, o) => n + (Number(o).toString(2).match(/1/g)?.length ?? 0), 0),
      }));
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      expect(route.bits).toBeGreaterThan(0); // 0.0.0.0/0 would be a default route
      expect(inRange(route.destination, podCidr) || inRange(route.destination, serviceCidr)).toBe(true);
    }
  });

  it('names resolve inside the cluster only: a Service resolves, a name off the machine does not', async () => {
    const resolve = (name: string) =>
      kubectl(
        'exec',
        `deployment/${resourceName('gateway')}`,
        '--',
        'node',
        '-e',
        'require("dns").promises.lookup(process.argv[1]).then((a) => console.log(a.address), (e) => console.log("ERR " + e.code))',
        name,
      );
    const postgres = (await resolve('message-bus-deps-postgres')).trim();
    expect(inRange(postgres, serviceCidr)).toBe(true);
    expect((await resolve('deb.debian.org')).trim()).toMatch(/^ERR /);
    expect(await kubectl('exec', `deployment/${resourceName('gateway')}`, '--', 'cat', '/etc/resolv.conf')).toMatch(/^nameserver 10\.96\.0\.10$/m);
  });
});

describe("production's shape", () => {
  it.each(REPLICATED)(
    '%s runs two ready replicas under its HorizontalPodAutoscaler and a PodDisruptionBudget',
    async (component) => {
      const name = resourceName(component);
      const hpa = JSON.parse(await kubectl('get', 'horizontalpodautoscaler', name, '-o', 'json')) as { spec: Record<string, unknown> };
      expect(hpa.spec).toMatchObject({ minReplicas: 2, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name } });
      const pdb = JSON.parse(await kubectl('get', 'poddisruptionbudget', name, '-o', 'json')) as { spec: Record<string, unknown> };
      expect(pdb.spec).toMatchObject({ maxUnavailable: 1 });
      await replicasReady(component);
    },
    200_000,
  );
});

describe('the bus through its Services', () => {
  it('issues a token, accepts every SOM message type, and a consumer receives and acks each exactly as published', async () => {
    const producerToken = await token(urls.auth, tenant.producer);
    const consumerToken = await token(urls.auth, tenant.consumer);
    const published = storyOfEveryType(SYSTEM_ID);
    expect(published.map((m) => m.message_type).sort()).toEqual(Object.keys(som.examples).sort());
    for (const m of published) {
      const res = await busCall(urls.gateway, 'POST', `/v1/tenants/${tenant.workspaceId}/messages`, producerToken, m);
      expect({ type: m.message_type, status: res.status, body: res.body }).toEqual({
        type: m.message_type,
        status: 202,
        body: expect.objectContaining({ accepted: true }),
      });
    }
    const consumerPath = `/v1/tenants/${tenant.workspaceId}/consumers/${tenant.consumer.client_id}`;
    const received = new Map<string, Received>();
    await eventually(
      async () => {
        const res = await busCall(urls.pullApi, 'GET', `${consumerPath}/messages?wait_seconds=5&max_messages=10`, consumerToken);
        expect(res.status).toBe(200);
        const batch = (res.body as { messages: Received[] }).messages;
        for (const r of batch) received.set(r.message_id, r);
        if (batch.length > 0) {
          const ack = await busCall(urls.pullApi, 'POST', `${consumerPath}/ack`, consumerToken, { receipt_handles: batch.map((r) => r.receipt_handle) });
          expect(ack.status).toBe(200);
          expect((ack.body as { results: Array<{ status: string }> }).results.every((r) => r.status === 'done')).toBe(true);
        }
        return received.size;
      },
      (n) => n >= published.length,
      { timeoutMs: 60_000, retryReadErrors: false, what: `all ${published.length} message types received` },
    );
    expect([...received.keys()].sort()).toEqual(published.map((m) => m.message_id).sort());
    for (const m of published) expect(received.get(m.message_id)!.envelope).toEqual(m);
    // Nothing left after the acks.
    const rest = await busCall(urls.pullApi, 'GET', `${consumerPath}/messages?wait_seconds=0`, consumerToken);
    expect((rest.body as { messages: Received[] }).messages).toEqual([]);
  }, 120_000);

  it.each(Object.keys(COMPONENTS) as Component[])('%s runs as uid 1000 on a read-only root filesystem, /tmp its only scratch space', async (component) => {
    const probe = [
      'const fs = require("fs");',
      'const tryWrite = (p) => { try { fs.writeFileSync(p, "x"); fs.unlinkSync(p); return "ok"; } catch (e) { return e.code; } };',
      'console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), app: tryWrite("/app/probe"), root: tryWrite("/probe"), tmp: tryWrite("/tmp/probe") }));',
    ].join(' ');
    const seen = JSON.parse(await kubectl('exec', `deployment/${resourceName(component)}`, '--', 'node', '-e', probe)) as Record<string, unknown>;
    expect(seen).toEqual({ uid: 1000, gid: 1000, app: 'EROFS', root: 'EROFS', tmp: 'ok' });
  });

  it.each(Object.keys(COMPONENTS) as Component[])('%s serves Prometheus metrics on /metrics', async (component) => {
    const res = await fetchObserved(`${forwards.get(component)!.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(String(res.body)).toMatch(/^process_cpu_seconds_total /m);
  });
});
