import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { BusConsumer, type ReceivedMessage } from '@bus/client';
import { som } from '@bus/schemas';
import { startBus, type RunningBus } from './support/bus';
import { bearerCall } from './support/bus-call';
import { deliveryCaughtUp } from './support/delivery';
import { TenantFixture, type Tenant } from './support/tenants';

/**
 * Invariant F, the acceptance contract (docs/gateway.md "What the gateway reads"): the gateway
 * answers 202 only for bodies every reader reads as one value. Hostile-but-well-formed bodies are
 * generated with a known feature each; the bus must refuse exactly the hostile ones with the
 * feature's rule, and hand out exactly the accepted ones, byte for byte, with an envelope equal to a
 * fresh JSON.parse of the stored bytes.
 */

const SYSTEM_ID = 'storyteller.web';
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

type Feature =
  | { kind: 'plain'; indent: number | '\t' | undefined; escapeReason: boolean }
  | { kind: 'bom' }
  | { kind: 'duplicate'; field: 'system_id' | 'message_type'; escapedName: boolean }
  | { kind: 'deep'; depth: number }
  | { kind: 'big-integer'; value: bigint }
  | { kind: 'lone-surrogate'; unit: number }
  | { kind: 'nul-in-id' };

interface Case {
  mode: 'messages' | 'validate';
  feature: Feature;
  reason: string;
  messageId: string;
}

/** The one refusal each hostile feature must get. */
const EXPECTED: Record<Exclude<Feature['kind'], 'plain'>, { status: number; rule: string }> = {
  bom: { status: 400, rule: 'schema.json_bom' },
  duplicate: { status: 400, rule: 'schema.json_duplicate_name' },
  deep: { status: 400, rule: 'schema.json_too_deep' },
  'big-integer': { status: 400, rule: 'schema.json_number_unsafe' },
  'lone-surrogate': { status: 400, rule: 'schema.json_string_invalid' },
  'nul-in-id': { status: 400, rule: 'schema.format' },
};

const unsafe = BigInt(Number.MAX_SAFE_INTEGER);
const feature: fc.Arbitrary<Feature> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('plain' as const), indent: fc.constantFrom(undefined, 2, '\t' as const), escapeReason: fc.boolean() }),
  },
  fc.constant({ kind: 'bom' as const }),
  fc.record({ kind: fc.constant('duplicate' as const), field: fc.constantFrom('system_id' as const, 'message_type' as const), escapedName: fc.boolean() }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 65, max: 20_000 }) }),
  fc.record({
    kind: fc.constant('big-integer' as const),
    value: fc.oneof(fc.bigInt({ min: unsafe + 1n, max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: -unsafe - 1n })),
  }),
  fc.record({ kind: fc.constant('lone-surrogate' as const), unit: fc.integer({ min: 0xd800, max: 0xdfff }) }),
  fc.constant({ kind: 'nul-in-id' as const }),
);
const cases: fc.Arbitrary<Case> = fc.record({
  mode: fc.constantFrom('messages' as const, 'validate' as const),
  feature,
  // Free text of system.audit's payload.reason (up to 500 characters): any Unicode, emoji included.
  reason: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  messageId: fc.uuid({ version: 4 }),
});

/** Every UTF-16 unit as a \u escape: a valid, unusual spelling of the same string. */
function escapedLiteral(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) out += `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return `${out}"`;
}

/** The body of a case, written member by member so that hostile spellings can be placed exactly. */
function bodyOf(c: Case): Buffer {
  const f = c.feature;
  const indent = f.kind === 'plain' ? f.indent : undefined;
  const reason =
    f.kind === 'plain' && f.escapeReason
      ? escapedLiteral(c.reason)
      : f.kind === 'deep'
        ? '['.repeat(f.depth) + ']'.repeat(f.depth)
        : f.kind === 'big-integer'
          ? f.value.toString()
          : f.kind === 'lone-surrogate'
            ? `"${JSON.stringify(c.reason).slice(1, -1)}\\u${f.unit.toString(16)}"`
            : JSON.stringify(c.reason);
  const example = som.examples['system.audit'] as Record<string, unknown>;
  const payload = { ...(example.payload as Record<string, unknown>), reason: '@reason@' };
  const members: Array<[string, string]> = [
    ['som_version', JSON.stringify('1.0')],
    ['message_id', JSON.stringify(f.kind === 'nul-in-id' ? `${c.messageId.slice(0, 8)}\u0000${c.messageId.slice(9)}` : c.messageId)],
    ['message_type', JSON.stringify('system.audit')],
    ['correlation_id', JSON.stringify(`acceptance-${c.messageId}`)],
    ['system_id', JSON.stringify(SYSTEM_ID)],
    ['occurred_at', JSON.stringify(new Date().toISOString())],
    // A function, not the string: a replacement string reads `$&`, `$'`, `` $` `` and `$$` in the
    // generated reason as patterns (about 1 reason in 14,000 holds one).
    ['payload', JSON.stringify(payload, null, indent).replace('"@reason@"', () => reason)],
  ];
  if (f.kind === 'duplicate') {
    // A second value the app may not publish (system_id) or of another type (message_type): a reader
    // keeping the first value and one keeping the last would disagree on what was published.
    const name = f.escapedName ? escapedLiteral(f.field) : JSON.stringify(f.field);
    members.push([name, JSON.stringify(f.field === 'system_id' ? 'demo.studio' : 'telling.started')]);
  }
  const text = `{${members.map(([name, value]) => `${name.startsWith('"') ? name : JSON.stringify(name)}:${value}`).join(indent === undefined ? ',' : ',\n')}}`;
  return f.kind === 'bom' ? Buffer.concat([BOM, Buffer.from(text, 'utf8')]) : Buffer.from(text, 'utf8');
}

let bus: RunningBus;
let tenants: TenantFixture;
let house: Tenant;
let producerToken: string;
let consumer: BusConsumer;

beforeAll(async () => {
  bus = await startBus();
  await deliveryCaughtUp(bus);
  tenants = await TenantFixture.create(bus);
  house = await tenants.tenant({ systemIds: [SYSTEM_ID], messageTypes: Object.keys(som.examples) });
  // A run publishes and receives faster than the standard tier's 20 requests a second.
  await tenants.admin.setQuota('workspace', house.workspaceId, { tier: 'high' });
  producerToken = await tenants.token(house.producer);
  consumer = new BusConsumer({ baseUrl: bus.busUrl, ...house.consumer });
}, 180_000);
afterAll(async () => {
  await tenants?.close();
  await bus?.stop();
}, 30_000);

/** Receives (and acks) until `messageId` arrives; returns it and every message id seen on the way. */
async function receiveUntil(messageId: string): Promise<{ found: ReceivedMessage; seen: string[] }> {
  const seen: string[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const messages = await consumer.receive({ waitSeconds: 10, maxMessages: 10 });
    if (messages.length > 0) await consumer.ack(messages.map((m) => m.receipt_handle));
    seen.push(...messages.map((m) => m.message_id));
    const found = messages.find((m) => m.message_id === messageId);
    if (found) return { found, seen };
  }
  throw new Error(`message ${messageId} was accepted but not received in 30 s`);
}

describe('the acceptance contract: a 202 only for what every reader reads the same way', () => {
  it('refuses each hostile body with its catalogued rule and delivers each accepted one byte for byte', async () => {
    const refusedIds = new Set<string>();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const bytes = bodyOf(c);
        const res = await bearerCall(bus, 'POST', `/v1/tenants/${house.workspaceId}/${c.mode}`, producerToken, bytes);
        if (c.feature.kind !== 'plain') {
          const expected = EXPECTED[c.feature.kind];
          expect(res.status).toBe(expected.status);
          expect(res.body).toMatchObject({ accepted: false, violations: [expect.objectContaining({ rule: expected.rule })] });
          refusedIds.add(c.messageId);
          return;
        }
        expect(res.status).toBe(202);
        if (c.mode === 'validate') {
          expect(res.body).toMatchObject({ accepted: true, dry_run: true });
          return;
        }
        accepted += 1;
        const { found, seen } = await receiveUntil(c.messageId);
        expect(seen.filter((id) => refusedIds.has(id))).toEqual([]);
        const stored = await tenants.db('messages').where({ workspace_id: house.workspaceId, message_id: c.messageId }).first('body');
        expect(Buffer.compare(stored!.body, bytes)).toBe(0);
        expect(found.envelope).toEqual(JSON.parse(bytes.toString('utf8')));
        expect(found.envelope).toMatchObject({ system_id: SYSTEM_ID, message_type: 'system.audit', payload: { reason: c.reason } });
      }),
      {
        numRuns: 60,
        seed: Number(process.env.ACCEPTANCE_SEED ?? Date.now() % 2 ** 31),
        endOnFailure: true,
        // Reasons holding String.replace's patterns, which broke the body's construction once in a while.
        examples: [[{ mode: 'messages', feature: { kind: 'plain', indent: undefined, escapeReason: false }, reason: "$& $' $` $$", messageId: randomUUID() }]],
      },
    );
    // The run must have exercised both sides: some accepted and delivered, some refused.
    expect(accepted).toBeGreaterThan(0);
    expect(refusedIds.size).toBeGreaterThan(0);
  }, 240_000);

  it('answers a NUL inside message_id with 400, never a 503 to retry for ever', async () => {
    const id = randomUUID();
    const res = await bearerCall(
      bus,
      'POST',
      `/v1/tenants/${house.workspaceId}/messages`,
      producerToken,
      bodyOf({ mode: 'messages', feature: { kind: 'nul-in-id' }, reason: 'x', messageId: id }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(res.body).toMatchObject({ violations: [{ rule: 'schema.format', path: '/message_id' }] });
  });
});
