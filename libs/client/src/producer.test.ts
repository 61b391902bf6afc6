import { BusRefusedError, BusUnreachableError, TokenRequestError } from './errors';
import { fakeBus, json, TOKEN_PATH, type Responder } from './fake-bus.test-support';
import { BusProducer } from './producer';
import type { ClientOptions } from './token';

const PUBLISH = 'POST /v1/tenants/wworkspace234/messages';
const message = { som_version: '1.0', message_id: '0b6e2c1a-6f4e-4c54-9d2a-1f7c3e9b8a01', message_type: 'telling.started', payload: { n: 1 } };
const accepted: Responder = () => json(202, { accepted: true, message_id: message.message_id, message_type: 'telling.started', family: 'telling' });
const unavailable: Responder = () =>
  json(503, { accepted: false, violations: [{ source: 'policy', rule: 'publish.unavailable', message: 'retry' }] }, { 'Retry-After': '1' });
const refused =
  (status: number, rule: string, headers: Record<string, string> = {}): Responder =>
  () =>
    json(status, { accepted: false, violations: [{ source: 'policy', rule, message: `refused: ${rule}` }] }, headers);

function producer(routes: Parameters<typeof fakeBus>[0], options: Partial<ClientOptions> = {}) {
  const bus = fakeBus(routes);
  const pauses: number[] = [];
  const p = new BusProducer({
    baseUrl: 'http://bus.test',
    clientId: 'cproducer2345',
    clientSecret: 'sbs_secret',
    fetch: bus.fetch,
    pause: async (ms) => {
      pauses.push(ms);
    },
    ...options,
  });
  return { p, bus, pauses, published: () => bus.seen.filter((r) => r.path === '/v1/tenants/wworkspace234/messages') };
}

describe('BusProducer.publish', () => {
  it('publishes to the workspace of its token with the token as bearer', async () => {
    const { p, bus, published } = producer({ [PUBLISH]: accepted });
    await expect(p.publish(message)).resolves.toEqual({
      status: 202,
      message_id: message.message_id,
      duplicate: false,
      message_type: 'telling.started',
      family: 'telling',
      tolerated: [],
      dry_run: false,
      attempts: 1,
    });
    expect(bus.seen[0]?.path).toBe(TOKEN_PATH);
    expect(bus.seen[0]?.authorization).toBe(`Basic ${Buffer.from('cproducer2345:sbs_secret').toString('base64')}`);
    expect(published()[0]?.authorization).toMatch(/^Bearer /);
  });

  it('resends the same bytes (the same message_id) after a 503, waiting its Retry-After', async () => {
    const { p, pauses, published } = producer({ [PUBLISH]: [unavailable, accepted] });
    expect((await p.publish(message)).attempts).toBe(2);
    expect(pauses).toEqual([1000]);
    const [first, second] = published();
    expect(second?.body).toBe(first?.body);
    expect(JSON.parse(first?.body ?? '')).toEqual(message);
  });

  it("retries a 429 after Retry-After, or after the RateLimit field's reset when there is no Retry-After", async () => {
    const withRetryAfter = producer({ [PUBLISH]: [refused(429, 'rate.limited', { 'Retry-After': '2' }), accepted] });
    await withRetryAfter.p.publish(message);
    expect(withRetryAfter.pauses).toEqual([2000]);
    const withRateLimit = producer({ [PUBLISH]: [refused(429, 'rate.limited', { RateLimit: '"burst";r=0;t=3, "daily";r=99;t=50000' }), accepted] });
    await withRateLimit.p.publish(message);
    expect(withRateLimit.pauses).toEqual([3000]);
  });

  it('answers a duplicate (200) as such', async () => {
    const { p } = producer({ [PUBLISH]: () => json(200, { accepted: true, duplicate: true, message_id: message.message_id }) });
    await expect(p.publish(message)).resolves.toMatchObject({ status: 200, duplicate: true, message_id: message.message_id });
  });

  it('throws a refusal at once with every violation, without retrying', async () => {
    const violations = [
      { source: 'schema', rule: 'schema.required', message: 'payload is required', path: '' },
      { source: 'schema', rule: 'schema.type', message: 'must be string', path: '/message_id' },
    ];
    const { p, published } = producer({ [PUBLISH]: () => json(400, { accepted: false, violations }) });
    const error = await p.publish(message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusRefusedError);
    expect(error).toMatchObject({ status: 400, rule: 'schema.required', violations, attempts: 1 });
    expect(published()).toHaveLength(1);
  });

  it('gives up after maxAttempts, and at once when Retry-After is longer than maxRetryDelayMs', async () => {
    const bounded = producer({ [PUBLISH]: unavailable }, { maxAttempts: 3 });
    await expect(bounded.p.publish(message)).rejects.toMatchObject({ status: 503, rule: 'publish.unavailable', attempts: 3 });
    expect(bounded.published()).toHaveLength(3);
    const longWait = producer({ [PUBLISH]: refused(429, 'quota.exceeded', { 'Retry-After': '40000' }) });
    await expect(longWait.p.publish(message)).rejects.toMatchObject({ status: 429, rule: 'quota.exceeded', attempts: 1 });
    expect(longWait.pauses).toEqual([]);
  });

  it('resends after a request that got no answer, and says so when none ever comes', async () => {
    const dropped: Responder = () => Promise.reject(new TypeError('fetch failed'));
    const once = producer({ [PUBLISH]: [dropped, accepted] });
    await expect(once.p.publish(message)).resolves.toMatchObject({ status: 202, attempts: 2 });
    const never = producer({ [PUBLISH]: dropped }, { maxAttempts: 2 });
    await expect(never.p.publish(message)).rejects.toBeInstanceOf(BusUnreachableError);
  });

  it('fetches a new token once when the bus refuses the cached one (401), then stops', async () => {
    const { p, bus } = producer({ [PUBLISH]: [refused(401, 'producer.unauthenticated'), accepted] });
    await p.publish(message);
    expect(bus.tokensIssued()).toBe(2);
    const always = producer({ [PUBLISH]: refused(401, 'producer.unauthenticated') });
    await expect(always.p.publish(message)).rejects.toMatchObject({ status: 401 });
    expect(always.bus.tokensIssued()).toBe(2);
  });

  it('sends a string body as it is, and validates on the validate route', async () => {
    const raw = JSON.stringify(message, null, 3);
    const { p, bus } = producer({
      'POST /v1/tenants/wworkspace234/validate': () => json(202, { accepted: true, message_id: 'm', message_type: 't', family: null, dry_run: true }),
    });
    await expect(p.validate(raw)).resolves.toMatchObject({ dry_run: true });
    expect(bus.seen[1]?.body).toBe(raw);
  });
});

describe('the token', () => {
  it('is reused for calls in its lifetime, shared by calls at once, and renewed before it expires', async () => {
    let now = new Date('2026-11-22T06:00:00Z');
    const { p, bus } = producer({ [PUBLISH]: accepted }, { now: () => now, renewBeforeSeconds: 60 });
    await Promise.all([p.publish(message), p.publish(message), p.publish(message)]);
    expect(bus.tokensIssued()).toBe(1);
    now = new Date('2026-11-22T06:58:59Z');
    await p.publish(message);
    expect(bus.tokensIssued()).toBe(1);
    now = new Date('2026-11-22T06:59:01Z');
    await p.publish(message);
    expect(bus.tokensIssued()).toBe(2);
  });

  it('surfaces a refused client as TokenRequestError with the OAuth error', async () => {
    const { p } = producer({ [`POST ${TOKEN_PATH}`]: () => json(401, { error: 'invalid_client', error_description: 'Client authentication failed' }) });
    const error = await p.publish(message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenRequestError);
    expect(error).toMatchObject({ status: 401, error: 'invalid_client' });
  });
});

describe('BusProducer.exportStory', () => {
  const EXPORT = 'GET /v1/tenants/wworkspace234/stories/story-1/export';
  const ndjson = (lines: unknown[]) => () =>
    new Response(lines.map((l) => `${JSON.stringify(l)}\n`).join(''), { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
  const story = { type: 'story', correlation_id: 'story-1', state: null, state_updated_at: null, exported_at: '2026-11-22T06:00:00.000Z' };
  const end = { type: 'end', messages: 0, deliveries: 0, bytes: 120, truncated: false };

  it('answers the NDJSON as sent and its lines, complete when the last is end', async () => {
    const { p } = producer({ [EXPORT]: ndjson([story, end]) });
    const exported = await p.exportStory('story-1');
    expect(exported.lines).toEqual([story, end]);
    expect(exported.ndjson).toBe(`${JSON.stringify(story)}\n${JSON.stringify(end)}\n`);
    expect(exported.complete).toBe(true);
  });

  it('tells an answer cut off before its end line', async () => {
    const { p } = producer({ [EXPORT]: ndjson([story]) });
    expect((await p.exportStory('story-1')).complete).toBe(false);
  });

  it('throws the 404 of an unknown correlation id', async () => {
    const { p } = producer({ [EXPORT]: refused(404, 'story.unknown') });
    await expect(p.exportStory('story-1')).rejects.toMatchObject({ status: 404, rule: 'story.unknown' });
  });
});
