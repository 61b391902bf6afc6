import { controlKey, ControlEventError, parseControlEvent, type ControlEvent } from './control';

describe('control events', () => {
  const event: ControlEvent = { type: 'connection.changed', connection_id: 'cabcdefghijk2', change: 'rotated', at: '2026-11-22T10:00:00.000Z' };

  it('round-trip as JSON, keyed by what changed so compaction keeps the last', () => {
    expect(parseControlEvent(Buffer.from(JSON.stringify(event)))).toEqual(event);
    expect(controlKey(event)).toBe('connection/cabcdefghijk2');
    expect(controlKey({ type: 'app.changed', app_id: 'aabcdefghijk2', at: event.at })).toBe('app/aabcdefghijk2');
    const quota: ControlEvent = { type: 'quota.changed', scope: 'workspace', id: 'wabcdefghijk2', at: event.at };
    expect(parseControlEvent(Buffer.from(JSON.stringify(quota)))).toEqual(quota);
    expect(controlKey(quota)).toBe('quota/workspace/wabcdefghijk2');
    const provider: ControlEvent = { type: 'provider.changed', provider_id: 'iabcdefghijk2', issuer: 'https://idp.example/', at: event.at };
    expect(parseControlEvent(Buffer.from(JSON.stringify(provider)))).toEqual(provider);
    expect(controlKey(provider)).toBe('provider/iabcdefghijk2');
    expect(controlKey({ type: 'binding.changed', provider_id: 'iabcdefghijk2', client: 'studio', at: event.at })).toBe('binding/iabcdefghijk2/studio');
  });

  it('refuses what they cannot be', () => {
    for (const value of [
      null,
      Buffer.from('not json'),
      Buffer.from('{"type":"connection.changed"}'),
      Buffer.from('{"type":"other"}'),
      Buffer.from('{"type":"quota.changed","scope":"app","id":"x"}'),
    ]) {
      expect(() => parseControlEvent(value)).toThrow(ControlEventError);
    }
  });
});
