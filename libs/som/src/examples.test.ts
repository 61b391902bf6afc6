import { som } from '@bus/schemas';
import { MESSAGE_TYPES } from './schema-set';
import { example, testValidator } from './testing';
import { SOM_ENVELOPE_VERSION } from './message';

describe('MESSAGE_TYPES', () => {
  it('are the ten types of spec 2.5, sorted', () => {
    expect(MESSAGE_TYPES).toEqual([
      'delivery.media_available',
      'link.committed',
      'link.gate_changed',
      'link.withdrawn',
      'skill.warning.raised',
      'story.context',
      'system.audit',
      'telling.ended',
      'telling.exposed',
      'telling.started',
    ]);
    expect(Object.isFrozen(MESSAGE_TYPES)).toBe(true);
  });

  it('each have a payload schema filed under their name, and an example', () => {
    for (const type of MESSAGE_TYPES) {
      expect(som.payloads[type]?.$id).toBe(`https://message-bus.invalid/schemas/som/1.0/payloads/${type}.json`);
      expect(Object.keys(som.examples)).toContain(type);
    }
    expect(Object.keys(som.examples).sort()).toEqual([...MESSAGE_TYPES]);
  });
});

describe.each(MESSAGE_TYPES)('example of %s (schemas/som/1.0/examples)', (type) => {
  const validator = testValidator();

  it('is valid, with nothing tolerated', () => {
    expect(validator.validate(example(type))).toEqual({ ok: true, message: example(type), violations: [], tolerated: [] });
  });

  it('is of its own type, in SOM 1.0, in the story of the other examples', () => {
    expect(example(type)).toMatchObject({ som_version: SOM_ENVELOPE_VERSION, message_type: type, correlation_id: 'session-7f3a9c' });
  });

  it('has a message_id no other example has', () => {
    const ids = MESSAGE_TYPES.map((other) => example(other)['message_id']);
    expect(ids.filter((id) => id === example(type)['message_id'])).toHaveLength(1);
  });

});
