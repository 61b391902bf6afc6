import pino from 'pino';
import type { AcceptedValidate, RateLimitCount, RefusalRecord } from '@bus/db';
import { MessageTooLargeError, ViolationsError } from '@bus/http';
import type { BearerIdentity } from '@bus/identity';
import { QuotaExceededError, RateLimitedError } from '@bus/limits';
import { createMetricsRegistry, type Registry } from '@bus/observability';
import { eventually } from '@bus/testing';
import { createRefusalRecorder, identifyingFields, type RefusalRecorderDeps } from './refusal-recorder';

const producer = { clientId: 'cproducer2345', kind: 'producer', workspaceId: 'wworkspace234', appId: 'a1' } as BearerIdentity;
const schemaRefusal = () => new ViolationsError(400, [{ source: 'schema', rule: 'schema.required', message: 'payload is required', path: '/payload' }]);
const body = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify({ ...fields, payload: { secret: 'the body' } }));

function recorder(overrides: Partial<RefusalRecorderDeps> = {}) {
  const written: Array<{ refusals: readonly RefusalRecord[]; counts: readonly RateLimitCount[]; validates: readonly AcceptedValidate[] }> = [];
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const r = createRefusalRecorder({
    write: async (refusals, counts, validates) => {
      written.push({ refusals, counts, validates });
    },
    openRunAt: async () => false,
    logger: pino({ level: 'silent' }),
    metrics,
    now: () => new Date('2026-11-22T06:00:00.000Z'),
    ...overrides,
  });
  return { r, written, metrics };
}

async function outcome(metrics: Registry, name: string): Promise<number> {
  const metric = (await metrics.getMetricsAsJSON()).find((m) => m.name === 'bus_refusals_recorded_total');
  return (metric?.values ?? []).find((v) => v.labels.outcome === name)?.value ?? 0;
}

describe('the recent-refusals recorder', () => {
  it('writes a refusal with the fields the body carried and the violations, never the body', async () => {
    const { r, written } = recorder();
    r.refused({
      identity: producer,
      mode: 'validate',
      body: body({ message_id: 'm-1', message_type: 'telling.started', correlation_id: 'c-1' }),
      error: schemaRefusal(),
    });
    expect(written).toEqual([]);
    await r.flush();
    expect(written).toHaveLength(1);
    expect(written[0]?.refusals).toEqual([
      {
        workspaceId: 'wworkspace234',
        connectionId: 'cproducer2345',
        mode: 'validate',
        messageId: 'm-1',
        messageType: 'telling.started',
        correlationId: 'c-1',
        status: 400,
        violations: [{ source: 'schema', rule: 'schema.required', message: 'payload is required', path: '/payload' }],
        violationsOmitted: 0,
        refusedAt: new Date('2026-11-22T06:00:00.000Z'),
      },
    ]);
    expect(JSON.stringify(written)).not.toContain('the body');
  });

  it('keeps the first five violations of a refusal, each cut short, and counts the rest', async () => {
    const { r, written } = recorder();
    const found = Array.from({ length: 30_000 }, (_, i) => ({
      source: 'schema' as const,
      rule: 'schema.additional_property',
      message: `unknown member ${'x'.repeat(1000)}${i}`,
      path: `/${'x'.repeat(1000)}${i}`,
    }));
    r.refused({ identity: producer, mode: 'publish', body: body({ message_id: 'm-2' }), error: new ViolationsError(400, found) });
    await r.flush();
    const [stored] = written[0]?.refusals ?? [];
    expect(stored?.violations).toHaveLength(5);
    expect(stored?.violationsOmitted).toBe(29_995);
    for (const v of stored?.violations ?? []) {
      expect(v.message).toHaveLength(200);
      expect(v.message.endsWith('…')).toBe(true);
      expect(v.path).toHaveLength(200);
    }
  });

  it('counts rate-limit refusals per connection instead of listing them', async () => {
    const { r, written, metrics } = recorder();
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: new RateLimitedError(1) });
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: new RateLimitedError(1) });
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: new QuotaExceededError(60, 25_000) });
    await r.flush();
    expect(written[0]?.refusals).toEqual([]);
    expect(written[0]?.counts).toEqual([
      { connectionId: 'cproducer2345', rateLimited: 2, quotaExceeded: 1, lastRefusedAt: new Date('2026-11-22T06:00:00.000Z') },
    ]);
    expect(await outcome(metrics, 'rate_limited')).toBe(3);
  });

  it('records nothing for a request no producer connection was authenticated for', async () => {
    const { r, written } = recorder();
    r.refused({ identity: undefined, mode: 'publish', body: undefined, error: schemaRefusal() });
    r.refused({ identity: { ...producer, kind: 'consumer' }, mode: 'publish', body: undefined, error: schemaRefusal() });
    await r.flush();
    expect(written).toEqual([]);
  });

  it('records a refusal before the body was read (413) without fields, and any other error as internal.error', async () => {
    const { r, written } = recorder();
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: new MessageTooLargeError(240_000) });
    r.refused({ identity: producer, mode: 'publish', body: body({ message_id: 'm-2' }), error: new Error('a bug') });
    await r.flush();
    expect(written[0]?.refusals.map((x) => [x.status, x.violations[0]?.rule, x.messageId])).toEqual([
      [413, 'message.too_large', null],
      [500, 'internal.error', 'm-2'],
    ]);
  });

  it('drops and counts a refusal when the queue is full, returning at once all the same', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { r, written, metrics } = recorder({
      maxQueued: 2,
      batchSize: 10,
      write: async (refusals, counts, validates) => {
        await gate;
        written.push({ refusals, counts, validates });
      },
    });
    for (let i = 0; i < 5; i++) r.refused({ identity: producer, mode: 'publish', body: undefined, error: schemaRefusal() });
    expect(await outcome(metrics, 'dropped_full')).toBe(3);
    const flushed = r.flush();
    open();
    await flushed;
    expect(written.flatMap((w) => w.refusals)).toHaveLength(2);
    expect(await outcome(metrics, 'written')).toBe(2);
  });

  it('bounds the body bytes it holds for queued refusals', async () => {
    const { r, metrics } = recorder({ maxQueuedBytes: 100 });
    r.refused({ identity: producer, mode: 'publish', body: Buffer.alloc(80, 'x'), error: schemaRefusal() });
    r.refused({ identity: producer, mode: 'publish', body: Buffer.alloc(80, 'x'), error: schemaRefusal() });
    expect(await outcome(metrics, 'dropped_full')).toBe(1);
  });

  it('logs and counts a batch Postgres refused, and neither throws nor stops recording', async () => {
    let fail = true;
    const stored: RefusalRecord[] = [];
    const { r, metrics } = recorder({
      write: async (refusals) => {
        if (fail) throw new Error('Postgres is down');
        stored.push(...refusals);
      },
    });
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: schemaRefusal() });
    await expect(r.flush()).resolves.toBeUndefined();
    expect(await outcome(metrics, 'dropped_write_failed')).toBe(1);
    fail = false;
    r.refused({ identity: producer, mode: 'publish', body: undefined, error: schemaRefusal() });
    await r.flush();
    expect(stored).toHaveLength(1);
  });

  it('writes in batches of batchSize as soon as one is full, and what is left on stop', async () => {
    const { r, written } = recorder({ batchSize: 3 });
    r.start();
    for (let i = 0; i < 4; i++) r.refused({ identity: producer, mode: 'publish', body: undefined, error: schemaRefusal() });
    await r.stop();
    expect(written.map((w) => w.refusals.length)).toEqual([3, 1]);
  });
});

describe('accepted validates for test runs', () => {
  it("queues a validate only while its workspace has a run open, with the body's fields and never the body", async () => {
    const open = new Set<string>();
    const { r, written } = recorder({ openRunAt: async (workspaceId) => open.has(workspaceId) });
    r.validated({ identity: producer, body: body({ message_id: 'm-before' }) });
    open.add(producer.workspaceId);
    r.validated({ identity: producer, body: body({ message_id: 'm-1', message_type: 'telling.started', correlation_id: 'c-1' }) });
    await eventually(
      async () => (await r.flush(), written.flatMap((w) => w.validates)),
      (v) => v.length > 0,
      { what: 'the validate queued' },
    );
    expect(written.flatMap((w) => w.validates)).toEqual([
      {
        workspaceId: 'wworkspace234',
        connectionId: 'cproducer2345',
        messageId: 'm-1',
        messageType: 'telling.started',
        correlationId: 'c-1',
        validatedAt: new Date('2026-11-22T06:00:00.000Z'),
      },
    ]);
    expect(written.flatMap((w) => w.refusals)).toEqual([]);
    expect(JSON.stringify(written)).not.toContain('the body');
  });

  it('records nothing and counts it when the open runs cannot be read', async () => {
    const { r, written, metrics } = recorder({ openRunAt: async () => Promise.reject(new Error('postgres down')) });
    r.validated({ identity: producer, body: body({ message_id: 'm-1' }) });
    await eventually(
      () => outcome(metrics, 'dropped_write_failed'),
      (n) => n === 1,
      { what: 'the failed read counted' },
    );
    await r.flush();
    expect(written).toEqual([]);
  });
});

describe('identifyingFields', () => {
  it('reads the three string fields of a JSON object and nothing from anything else', () => {
    expect(identifyingFields(body({ message_id: 'm', message_type: 't', correlation_id: 7 }))).toEqual({
      message_id: 'm',
      message_type: 't',
      correlation_id: null,
    });
    for (const text of ['', 'not json', '[1]', 'null', '"m"']) {
      expect(identifyingFields(Buffer.from(text))).toEqual({ message_id: null, message_type: null, correlation_id: null });
    }
  });

  it('cuts a long value and makes a NUL storable', () => {
    const fields = identifyingFields(body({ message_id: 'x'.repeat(1000), correlation_id: 'a\u0000b' }));
    expect(fields.message_id).toHaveLength(128);
    expect(fields.correlation_id).toBe('a\uFFFDb');
  });
});
