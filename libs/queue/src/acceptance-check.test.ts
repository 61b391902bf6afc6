import { bodyDigest, contentHash } from '@bus/som';
import { judgeAcceptance, readRecordContent } from './acceptance-check';
import type { Acceptance } from './delivery-store';
import { RecordValue } from './record-content';

const message = { som_version: '1.0', message_id: 'm-1', payload: { b: [1, 2], a: 'é' } };
const bytes = Buffer.from(JSON.stringify(message, null, 2));
const record = {
  headers: {
    workspace_id: 'w-1',
    message_id: 'm-1',
    message_type: 'telling.started',
    family: 'telling',
    producer_connection_id: 'p-1',
    content_hash: 'not trusted',
    accepted_at: '2026-11-24T00:00:00.000Z',
    traceparent: null,
  },
  partition: 1,
  offset: '7',
};
const acceptance = (bodySha256: Buffer | null, hash = contentHash(message)): Acceptance => ({
  contentHash: hash,
  bodySha256,
  correlationId: 'c-1',
  messageType: 'telling.started',
  acceptedAt: new Date('2026-11-24T00:00:00Z'),
});
const verdict = (value: Buffer, accepted: Acceptance | null) => {
  const check = judgeAcceptance(record, new RecordValue(value), accepted);
  return check.accepted ? 'accepted' : check.reason;
};

describe("invariant A's verdict on a record", () => {
  it('accepts the very bytes accepted by their digest, without their content hash', () => {
    const value = new RecordValue(bytes);
    const check = judgeAcceptance(record, value, acceptance(bodyDigest(bytes), 'a content hash no bytes have'));
    expect(check).toMatchObject({ accepted: true, message: { body: bytes, messageId: 'm-1', correlationId: 'c-1', kafkaOffset: '7' } });
  });

  it('falls back on the content hash when the digest does not match or was never recorded', () => {
    const reserialised = Buffer.from(JSON.stringify(Object.fromEntries(Object.entries(message).reverse())));
    expect(verdict(bytes, acceptance(null))).toBe('accepted');
    expect(verdict(reserialised, acceptance(bodyDigest(bytes)))).toBe('accepted');
    expect(verdict(Buffer.from(JSON.stringify({ ...message, extra: 1 })), acceptance(bodyDigest(bytes)))).toBe('acceptance.hash_mismatch');
    expect(verdict(Buffer.from(JSON.stringify({ ...message, extra: 1 })), acceptance(null))).toBe('acceptance.hash_mismatch');
  });

  it('refuses bytes that are not strict JSON as unreadable, and a record without acceptance as missing', () => {
    expect(verdict(Buffer.from(`${JSON.stringify(message)} trailing`), acceptance(bodyDigest(bytes)))).toBe('value.unreadable');
    expect(verdict(Buffer.from('{"a":1,"a":2}'), acceptance(null))).toBe('value.unreadable');
    expect(verdict(bytes, null)).toBe('acceptance.missing');
  });

  it('reads a value for replay and redrive at once: missing, unreadable, or ready with its content hash', () => {
    expect(readRecordContent(null)).toEqual({ reason: 'value.missing' });
    expect(readRecordContent(Buffer.from('not json'))).toEqual({ reason: 'value.unreadable' });
    const content = readRecordContent(bytes);
    expect(content instanceof RecordValue && content.contentHash()).toBe(contentHash(message));
  });
});
