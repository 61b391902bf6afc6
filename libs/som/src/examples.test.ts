import { som } from '@bus/schemas';
import { MESSAGE_TYPES } from './schema-set';
import { example, testValidator } from './testing';
import { SOM_ENVELOPE_VERSION, type SomMessage } from './message';
import { applySequence, type StoryState } from './sequence';

describe('MESSAGE_TYPES', () => {
  it('are the ten types of docs/api.md#health, sorted', () => {
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

describe('the examples as one story (som.story: the files numbered in publishing order)', () => {
  const story = som.story as SomMessage[];

  it('holds every example once, one per message type', () => {
    expect(story.map((m) => m.message_type).sort()).toEqual([...MESSAGE_TYPES]);
    expect(story.map((m) => som.examples[m.message_type])).toEqual(story);
  });

  it('is accepted in that order: each message passes the sequence rules on the state the ones before it left', () => {
    let state: StoryState | null = null;
    for (const message of story) {
      const outcome = applySequence(state, message);
      expect({ type: message.message_type, ok: outcome.ok }).toEqual({ type: message.message_type, ok: true });
      if (outcome.ok) state = outcome.next;
    }
    expect(state?.telling).toMatchObject({ phase: 'ended' });
  });

  it('starts the telling before its exposures and ends it after them, and happens in that order', () => {
    const types = story.map((m) => m.message_type);
    expect(types.indexOf('telling.started')).toBeLessThan(types.indexOf('telling.exposed'));
    expect(types.indexOf('telling.exposed')).toBeLessThan(types.indexOf('telling.ended'));
    const times = story.map((m) => Date.parse(m.occurred_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('refers only to messages published before the referring one', () => {
    const earlier = new Set<string>();
    for (const message of story) {
      const payload = message.payload as { trigger?: { message_id: string }; subject?: { message_id: string } };
      for (const reference of [payload.trigger, payload.subject]) {
        if (reference) expect(earlier).toContain(reference.message_id);
      }
      earlier.add(message.message_id);
    }
  });
});
