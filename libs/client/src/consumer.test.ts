import { eventually } from '@bus/testing';
import { BusConsumer, type ConsumerOptions, type ReceivedMessage } from './consumer';
import { BusRefusedError } from './errors';
import { fakeBus, json, type Responder, type SeenRequest } from './fake-bus.test-support';

const BASE = '/v1/tenants/wworkspace234/consumers/cconsumer2345';
const RECEIVE = `GET ${BASE}/messages`;
const ACK = `POST ${BASE}/ack`;
const NACK = `POST ${BASE}/nack`;

function received(id: string, correlationId: string): ReceivedMessage {
  return {
    receipt_handle: `h-${id}`,
    message_id: id,
    message_type: 'telling.started',
    correlation_id: correlationId,
    published_at: '2026-11-22T06:00:00.000Z',
    receive_count: 1,
    envelope: { message_id: id },
  };
}

/** A long poll with nothing to hand out: it waits until the client abandons it. */
const emptyLongPoll: Responder = (_req, signal) =>
  new Promise((_resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

const settled: Responder = (req) =>
  json(200, { results: (JSON.parse(req.body ?? '{}') as { receipt_handles: string[] }).receipt_handles.map((h) => ({ receipt_handle: h, status: 'done' })) });

function consumer(routes: Parameters<typeof fakeBus>[0], options: Partial<ConsumerOptions> = {}) {
  const bus = fakeBus({ [ACK]: settled, [NACK]: settled, ...routes });
  const errors: Array<{ stage: string; message?: string }> = [];
  const c = new BusConsumer({
    baseUrl: 'http://bus.test',
    clientId: 'cconsumer2345',
    clientSecret: 'sbs_secret',
    fetch: bus.fetch,
    pause: async () => undefined,
    onError: (_err, context) => errors.push({ stage: context.stage, ...(context.message ? { message: context.message.message_id } : {}) }),
    ...options,
  });
  const bodies = (key: string) =>
    bus.seen
      .filter((r: SeenRequest) => `${r.method} ${r.path}` === key)
      .map((r) => JSON.parse(r.body ?? '{}') as { receipt_handles: string[]; delay_seconds?: number });
  return { c, bus, errors, bodies };
}

describe('BusConsumer.run', () => {
  it('acks what the handler finished and nacks what it threw on, with the delay, leaving the rest of that correlation id alone', async () => {
    const batch = [received('a1', 'A'), received('b1', 'B'), received('a2', 'A'), received('b2', 'B')];
    const { c, bodies, errors } = consumer({ [RECEIVE]: [() => json(200, { messages: batch }), emptyLongPoll] }, { nackDelaySeconds: 5 });
    const handled: string[] = [];
    const running = c.run((m) => {
      handled.push(m.message_id);
      if (m.message_id === 'b1') throw new Error('handler failed');
    });
    await eventually(
      () => bodies(NACK).length,
      (n) => n === 1,
      { what: 'the nack' },
    );
    await c.stop();
    await running;
    expect(handled).toEqual(['a1', 'b1', 'a2']);
    expect(bodies(ACK)).toEqual([{ receipt_handles: ['h-a1', 'h-a2'] }]);
    expect(bodies(NACK)).toEqual([{ receipt_handles: ['h-b1'], delay_seconds: 5 }]);
    expect(errors).toEqual([{ stage: 'handler', message: 'b1' }]);
  });

  it('passes the receive options as query parameters', async () => {
    const { c, bus } = consumer({ [RECEIVE]: emptyLongPoll }, { maxMessages: 3, waitSeconds: 7, visibilityTimeoutSeconds: 45 });
    const running = c.run(() => undefined);
    await eventually(
      () => bus.calls(RECEIVE),
      (n) => n === 1,
      { what: 'a receive' },
    );
    await c.stop();
    await running;
    const query = bus.seen.find((r) => r.method === 'GET')?.query;
    expect(Object.fromEntries(query ?? [])).toEqual({ max_messages: '3', wait_seconds: '7', visibility_timeout: '45' });
  });

  it('on stop, finishes the message in hand and nacks the rest of the receive without delay', async () => {
    const batch = [received('a1', 'A'), received('b1', 'B'), received('c1', 'C')];
    const { c, bodies } = consumer({ [RECEIVE]: [() => json(200, { messages: batch }), emptyLongPoll] }, { nackDelaySeconds: 30 });
    let stopping: Promise<void> | undefined;
    const handled: string[] = [];
    const running = c.run((m) => {
      handled.push(m.message_id);
      stopping ??= c.stop();
    });
    await running;
    await stopping;
    expect(handled).toEqual(['a1']);
    expect(bodies(ACK)).toEqual([{ receipt_handles: ['h-a1'] }]);
    expect(bodies(NACK)).toEqual([{ receipt_handles: ['h-b1', 'h-c1'], delay_seconds: 0 }]);
  });

  it('retries a receive the bus could not answer (503), reporting it, and ends when the bus refuses the consumer (403)', async () => {
    const unavailable: Responder = () =>
      json(503, { accepted: false, violations: [{ source: 'policy', rule: 'queue.unavailable', message: 'retry' }] }, { 'Retry-After': '1' });
    const forbidden: Responder = () => json(403, { accepted: false, violations: [{ source: 'policy', rule: 'consumer.mismatch', message: 'not yours' }] });
    const { c, errors, bus } = consumer({ [RECEIVE]: [unavailable, unavailable, forbidden] }, { maxAttempts: 1 });
    const error = await c.run(() => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusRefusedError);
    expect(error).toMatchObject({ status: 403, rule: 'consumer.mismatch' });
    expect(errors).toEqual([{ stage: 'receive' }, { stage: 'receive' }]);
    expect(bus.calls(RECEIVE)).toBe(3);
  });

  it('reports a handle the bus no longer takes (its lease ended) without stopping', async () => {
    const stale: Responder = (req) =>
      json(200, {
        results: (JSON.parse(req.body ?? '{}') as { receipt_handles: string[] }).receipt_handles.map((h) => ({
          receipt_handle: h,
          status: 'failed',
          code: 'receipt_handle.stale',
        })),
      });
    const { c, errors } = consumer({ [RECEIVE]: [() => json(200, { messages: [received('a1', 'A')] }), emptyLongPoll], [ACK]: stale });
    const running = c.run(() => undefined);
    await eventually(
      () => errors.length,
      (n) => n === 1,
      { what: 'the settle error' },
    );
    await c.stop();
    await running;
    expect(errors).toEqual([{ stage: 'settle' }]);
  });
});

describe('BusConsumer.ready', () => {
  const READY = `GET ${BASE}`;
  const state = {
    consumer_id: 'cconsumer2345',
    workspace_id: 'wworkspace234',
    status: 'active',
    created_at: '2026-11-22T06:00:00.000Z',
    queue: { depth: 0, visible: 0, in_flight: 0, delayed: 0, dead_letters: 0, oldest_age_seconds: null },
  };
  const unavailable: Responder = () => json(503, { accepted: false, violations: [{ source: 'policy', rule: 'queue.unavailable', message: 'retry' }] });
  const refusedWith =
    (status: number, rule: string): Responder =>
    () =>
      json(status, { accepted: false, violations: [{ source: 'policy', rule, message: rule }] });

  it("resolves with the consumer's state once its route answers 200, after a 503 and a refused connection", async () => {
    let refusedOnce = false;
    const { bus } = consumer({ [READY]: [unavailable, () => json(200, state)] });
    const flaky = (async (input: string | URL | Request, init?: RequestInit) => {
      if (!refusedOnce && String(input).endsWith(BASE)) {
        refusedOnce = true;
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
      }
      return bus.fetch(input, init);
    }) as typeof fetch;
    const ready = new BusConsumer({
      baseUrl: 'http://bus.test',
      clientId: 'cconsumer2345',
      clientSecret: 'sbs_secret',
      fetch: flaky,
      pause: async () => undefined,
    });
    await expect(ready.ready()).resolves.toEqual(state);
    expect(bus.calls(READY)).toBe(2);
  });

  it('gives up after maxAttempts when the bus stays unavailable', async () => {
    const { c, bus } = consumer({ [READY]: unavailable }, { maxAttempts: 3 });
    await expect(c.ready()).rejects.toThrow(BusRefusedError);
    expect(bus.calls(READY)).toBe(3);
  });

  it.each([
    [401, 'producer.unauthenticated'],
    [403, 'consumer.mismatch'],
    [404, 'route.not_found'],
  ])('throws a %i at once, naming its rule', async (status, rule) => {
    const { c, bus } = consumer({ [READY]: refusedWith(status, rule) });
    const error = await c.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusRefusedError);
    expect(error).toMatchObject({ status, rule, message: expect.stringContaining(`${status} ${rule}`) });
    // A 401 gets one new token first (a rotation may have ended the old one); the others are not retried.
    expect(bus.calls(READY)).toBe(status === 401 ? 2 : 1);
  });
});
