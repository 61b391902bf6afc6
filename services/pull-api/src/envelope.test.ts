import { MAX_ENVELOPE_DEPTH, renderEnvelope } from './envelope';

const bytes = (text: string) => Buffer.from(text, 'utf8');
/** An object whose arrays bring the nesting to `depth` levels, the object itself being level 1. */
const nested = (depth: number) => bytes(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);

describe('renderEnvelope', () => {
  it('renders a JSON object as it parses, whitespace and all', () => {
    expect(renderEnvelope(bytes(' {\n "message_id" : "m", "payload": {"n": [1, 2]}}\t'))).toEqual({
      ok: true,
      envelope: { message_id: 'm', payload: { n: [1, 2] } },
    });
  });

  it.each([
    ['a UTF-8 byte order mark before the JSON', 'json.invalid', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes('{}')])],
    ['bytes after the JSON', 'json.invalid', bytes('{} {}')],
    ['empty bytes', 'json.invalid', bytes('')],
    ['malformed UTF-8 inside a string', 'utf8.invalid', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
    ['a UTF-16 body', 'json.invalid', Buffer.from('{"a":1}', 'utf16le')],
    ['an array', 'json.not_object', bytes('[{"a":1}]')],
    ['null', 'json.not_object', bytes('null')],
    ['a string', 'json.not_object', bytes('"{}"')],
    ['an object one level deeper than the bound', 'json.too_deep', nested(MAX_ENVELOPE_DEPTH + 1)],
  ])('refuses %s (%s)', (_what, reason, body) => {
    expect(renderEnvelope(body)).toEqual({ ok: false, reason });
  });

  it('renders an object nested exactly as deep as the bound, and the answer around it serialises', () => {
    const rendered = renderEnvelope(nested(MAX_ENVELOPE_DEPTH));
    expect(rendered.ok).toBe(true);
    // The receive answer wraps the envelope three levels deeper: { messages: [ { envelope } ] }.
    expect(() => JSON.stringify({ messages: [{ envelope: rendered.ok && rendered.envelope }] })).not.toThrow();
  });

  it('measures depth through objects and arrays alike, not only along the first member', () => {
    const deepInSecondMember = bytes(`{"shallow":1,"deep":${'{"x":'.repeat(MAX_ENVELOPE_DEPTH)}0${'}'.repeat(MAX_ENVELOPE_DEPTH)}}`);
    expect(renderEnvelope(deepInSecondMember)).toEqual({ ok: false, reason: 'json.too_deep' });
  });
});
