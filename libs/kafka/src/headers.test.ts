import { decodeMessageHeaders, encodeMessageHeaders, HeaderDecodeError, messageKey, type MessageHeaders } from './headers';

const headers: MessageHeaders = {
  workspace_id: 'wabcdefghijk2',
  message_id: 'm-1',
  message_type: 'telling.started',
  family: 'telling',
  producer_connection_id: 'cabcdefghijk2',
  content_hash: 'a'.repeat(64),
  accepted_at: '2026-11-22T10:00:00.000Z',
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
};

describe('message header codec', () => {
  it('round-trips through the Buffers kafkajs hands a consumer', () => {
    const wire = Object.fromEntries(Object.entries(encodeMessageHeaders(headers)).map(([k, v]) => [k, Buffer.from(String(v))]));
    expect(decodeMessageHeaders(wire)).toEqual(headers);
  });

  it('leaves out a null family and traceparent and reads them back as null', () => {
    const encoded = encodeMessageHeaders({ ...headers, family: null, traceparent: null });
    expect(Object.keys(encoded)).not.toEqual(expect.arrayContaining(['family']));
    expect(Object.keys(encoded)).not.toEqual(expect.arrayContaining(['traceparent']));
    expect(decodeMessageHeaders(encoded)).toEqual({ ...headers, family: null, traceparent: null });
  });

  it('reads a malformed traceparent as none: it is stored with the message, so only a well-formed one passes', () => {
    for (const traceparent of ['garbage', `00-${'0'.repeat(32)}-b7ad6b7169203331-01-${'x'.repeat(1000)}`, headers.traceparent!.toUpperCase()]) {
      expect(decodeMessageHeaders({ ...encodeMessageHeaders(headers), traceparent }).traceparent).toBeNull();
    }
  });

  it('names every missing required header', () => {
    const { content_hash: _h, message_id: _m, ...rest } = headers;
    expect(() => decodeMessageHeaders(rest as unknown as Record<string, string>)).toThrow(
      new HeaderDecodeError('record lacks headers: message_id, content_hash'),
    );
    expect(() => decodeMessageHeaders(undefined)).toThrow(HeaderDecodeError);
  });

  it('keys a message by workspace and correlation id', () => {
    expect(messageKey('wabcdefghijk2', 'story-7')).toBe('wabcdefghijk2/story-7');
  });
});
