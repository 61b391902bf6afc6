import { randomUUID } from 'node:crypto';
import { BusConsumer, BusProducer, BusRefusedError, type ReceivedMessage } from '@bus/client';
import { som } from '@bus/schemas';
import { eventually } from '@bus/testing';
import { startBus, type RunningBus } from './support/bus';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * libs/client against the compiled all-in-one bus: the token renewed before it expires,
 * retries on real 429s honouring Retry-After, refusals as typed errors, and the consumer loop's
 * handler failure → nack → redelivery → ack.
 */
const SYSTEM_ID = 'storyteller.web';
const ALL_TYPES = Object.keys(som.examples);

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

function message(type = 'telling.started', correlationId = `c-${randomUUID()}`) {
  return { ...(som.examples[type] as Record<string, unknown>), message_id: randomUUID(), correlation_id: correlationId, occurred_at: new Date().toISOString() };
}

/** fetch, with the path of every request sent and the status of every answer kept. */
function observedFetch() {
  const sent: string[] = [];
  const answers: Array<{ path: string; status: number; retryAfter: string | null }> = [];
  const observed: typeof fetch = async (input, init) => {
    sent.push(new URL(String(input)).pathname);
    const res = await fetch(input, init);
    answers.push({ path: new URL(String(input)).pathname, status: res.status, retryAfter: res.headers.get('retry-after') });
    return res;
  };
  return { fetch: observed, sent, answers };
}

describe('the producer', () => {
  it('reuses its token, and fetches a new one before the old one expires', async () => {
    const { fetch, answers } = observedFetch();
    let now = new Date();
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer, fetch, now: () => now, renewBeforeSeconds: 60 });
    await producer.publish(message());
    await producer.validate(message());
    expect(answers.filter((a) => a.path === '/v1/oauth/token')).toHaveLength(1);
    // 59½ minutes on: the token has less than its renewal margin left, so the next call fetches another.
    now = new Date(now.getTime() + 3_570_000);
    expect((await producer.publish(message())).status).toBe(202);
    expect(answers.filter((a) => a.path === '/v1/oauth/token').map((a) => a.status)).toEqual([200, 200]);
  }, 30_000);

  it('throws a refusal with its violations, and answers a resend of an accepted message as a duplicate', async () => {
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    const refused = await producer.publish({ ...message(), payload: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BusRefusedError);
    expect((refused as BusRefusedError).status).toBe(400);
    expect((refused as BusRefusedError).violations.every((v) => v.source === 'schema')).toBe(true);
    const m = message();
    expect(await producer.publish(m)).toMatchObject({ status: 202, duplicate: false, message_id: m.message_id, family: 'telling' });
    expect(await producer.publish(m)).toMatchObject({ status: 200, duplicate: true, message_id: m.message_id });
  }, 30_000);

  it('retries real 429s after their Retry-After until every message is accepted once, and the bus counts them', async () => {
    const limited = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: ALL_TYPES });
    await tenants.admin.setQuota('workspace', limited.workspaceId, { tier: 'custom', perSecond: 1, burst: 1, perDay: 10_000 });
    const { fetch, answers } = observedFetch();
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...limited.producer, fetch, maxAttempts: 10 });
    const messages = [message(), message(), message()];
    // The quota change reaches the gateway through the control topic: publish until a 429 was seen.
    const results = await eventually(
      () => Promise.all(messages.map((m) => producer.publish(m))),
      () => answers.some((a) => a.status === 429),
      { timeoutMs: 30_000, retryReadErrors: false, what: 'a 429 from the new quota' },
    );
    expect(results.map((r) => r.message_id).sort()).toEqual(messages.map((m) => m.message_id).sort());
    const limitedAnswers = answers.filter((a) => a.status === 429 && a.path.endsWith('/messages'));
    expect(limitedAnswers.every((a) => a.retryAfter !== null)).toBe(true);
    // Every message ended accepted (202) or, resent after its acceptance, a duplicate (200): none twice.
    const story = await Promise.all(messages.map((m) => producer.trace(m.message_id)));
    expect(story.map((t) => t.message_id).sort()).toEqual(messages.map((m) => m.message_id).sort());
    const refusals = await eventually(
      () => producer.refusals(),
      (r) => r.rate_limited.rate_limited > 0,
      { timeoutMs: 20_000, what: 'the 429s counted' },
    );
    expect(refusals.rate_limited.rate_limited).toBeGreaterThanOrEqual(limitedAnswers.length);
    expect(refusals.refusals).toEqual([]);
  }, 90_000);
});

describe('the consumer', () => {
  it('nacks what its handler threw on, gets it again after the delay, and acks it then, in order per correlation id', async () => {
    const producer = new BusProducer({ baseUrl: bus.busUrl, ...house.producer });
    const correlationId = `c-${randomUUID()}`;
    const first = message('telling.started', correlationId);
    const second = message('telling.exposed', correlationId);
    await producer.publish(first);
    await producer.publish(second);

    const seen: Array<{ id: string; receiveCount: number }> = [];
    const handlerErrors: unknown[] = [];
    const consumer = new BusConsumer({
      baseUrl: bus.busUrl,
      ...house.consumer,
      waitSeconds: 2,
      nackDelaySeconds: 1,
      onError: (err, { stage }) => stage === 'handler' && handlerErrors.push(err),
    });
    const running = consumer.run((m: ReceivedMessage) => {
      if (m.correlation_id !== correlationId) return;
      seen.push({ id: m.message_id, receiveCount: m.receive_count });
      if (m.message_id === first.message_id && m.receive_count === 1) throw new Error('the handler fails the first time');
    });
    try {
      await eventually(
        () => seen.length,
        (n) => n >= 3,
        { timeoutMs: 30_000, what: 'the redelivery and the next message' },
      );
    } finally {
      await consumer.stop();
      await running;
    }
    expect(seen).toEqual([
      { id: first.message_id, receiveCount: 1 },
      { id: first.message_id, receiveCount: 2 },
      { id: second.message_id, receiveCount: expect.any(Number) },
    ]);
    expect(handlerErrors).toHaveLength(1);
    const trace = await producer.trace(first.message_id);
    expect(trace.deliveries.find((d) => d.consumer_id === house.consumer.clientId)).toMatchObject({ state: 'acked', receive_count: 2, nack_count: 1 });
    const after = await producer.trace(second.message_id);
    expect(after.deliveries.find((d) => d.consumer_id === house.consumer.clientId)).toMatchObject({ state: 'acked' });
  }, 60_000);

  it('stops promptly while its long poll waits', async () => {
    const { fetch, sent } = observedFetch();
    const consumer = new BusConsumer({ baseUrl: bus.busUrl, ...house.consumer, waitSeconds: 20, fetch });
    const running = consumer.run(() => undefined);
    await eventually(
      () => sent.filter((path) => path.endsWith('/messages')).length,
      (n) => n >= 1,
      { what: 'the consumer polling' },
    );
    const stoppedIn = Date.now();
    await consumer.stop();
    await running;
    expect(Date.now() - stoppedIn).toBeLessThan(5_000);
  }, 30_000);
});
