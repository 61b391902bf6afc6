import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { QUOTA_TIERS, rateLimitFields } from '@bus/limits';
import { createMetricsRegistry } from '@bus/observability';
import { openapi } from '@bus/schemas';
import { createOpenApiChecker } from '@bus/testing';
import { UNRENDERABLE_REASONS } from './envelope';
import { createPullMetrics, messageRecord } from './pull';
import type { LeasedMessage } from '@bus/queue';
import { createReceiptHandles } from './receipt';

/** The receive answer's record as bus.json documents it, for both forms messageRecord makes. */
const busApi = createOpenApiChecker(openapi.bus);
const path = '/v1/tenants/wbusopenapi22/consumers/cbusopenapi22/messages';
const deps = {
  handles: createReceiptHandles(randomBytes(32)),
  logger: pino({ level: 'silent' }),
  metrics: createPullMetrics(createMetricsRegistry({ defaultMetrics: false })),
};

function leased(body: Buffer): LeasedMessage {
  return {
    deliveryId: '7',
    generation: 1,
    messageId: 'm-1',
    messageType: 'telling.started',
    correlationId: 'c-1',
    publishedAt: new Date(),
    receiveCount: 1,
    body,
    traceparent: null,
  };
}

/** The headers of a receive answer: its content type and the connection quota's RateLimit fields. */
const headers = {
  'content-type': 'application/json; charset=utf-8',
  ...rateLimitFields(QUOTA_TIERS.standard, { allowed: true, second: { remaining: 19, resetSeconds: 1 }, day: { remaining: 99_999, resetSeconds: 3600 } }),
};
const answer = (messages: unknown[]) => () => busApi.check('GET', path, { status: 200, headers, body: { messages } });

describe('the receive record in bus.json', () => {
  it('describes a rendered record and an unrenderable one as messageRecord makes them', () => {
    const rendered = messageRecord(deps, 'cbusopenapi22', leased(Buffer.from('{"a":1}')));
    const unrenderable = messageRecord(deps, 'cbusopenapi22', leased(Buffer.from('\ufeff{"a":1}')));
    expect(unrenderable).toMatchObject({ envelope: null, envelope_error: 'json.invalid' });
    expect(answer([rendered, unrenderable])).not.toThrow();
  });

  it('refuses a record with envelope null but without why and the bytes, or with an envelope and either', () => {
    const rendered = messageRecord(deps, 'cbusopenapi22', leased(Buffer.from('{"a":1}')));
    expect(answer([{ ...rendered, envelope: null }])).toThrow(/envelope_error|body_base64/);
    expect(answer([{ ...rendered, body_base64: 'e30=' }])).toThrow(/must NOT be valid/);
    expect(answer([{ ...rendered, envelope_error: 'json.invalid' }])).toThrow(/must NOT be valid/);
    expect(answer([{ ...rendered, envelope: null, envelope_error: 'json.unknown', body_base64: 'e30=' }])).toThrow(/envelope_error/);
  });

  it('names every reason renderEnvelope gives, and no other', () => {
    const schemas = (openapi.bus as unknown as { components: { schemas: Record<string, { properties: Record<string, { enum?: unknown }> }> } }).components
      .schemas;
    expect(schemas.ReceivedMessage?.properties.envelope_error?.enum).toEqual(UNRENDERABLE_REASONS);
  });
});
