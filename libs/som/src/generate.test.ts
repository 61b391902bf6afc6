/**
 * The generator's promise, over many seeds: every message passes the validator (schema and
 * conformance, nothing even tolerated) and every story is accepted in order by the sequence machines
 * from an empty story state; the same seed gives the same messages; every type shows up.
 */
import fc from 'fast-check';
import { generatableTypes, generateStories, interleaveStories, type GeneratedStory } from './generate';
import { checkPolicy } from './policy';
import { MESSAGE_TYPES } from './schema-set';
import { applySequence, type StoryState } from './sequence';
import { TEST_NOW, testValidator } from './testing';

const validator = testValidator();
const SYSTEM_ID = 'storyteller.web';
const seed = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });

/** What the bus would say about a story published in order from an empty state; [] when all is accepted. */
function problemsOf(story: GeneratedStory): string[] {
  let state: StoryState | null = null;
  const problems: string[] = [];
  for (const message of story.messages) {
    const at = `${message.message_type} ${message.message_id}`;
    const validation = validator.validate(structuredClone(message));
    if (!validation.ok) problems.push(...validation.violations.map((v) => `${at}: ${v.rule} ${v.path ?? ''} ${v.message}`));
    problems.push(...validation.tolerated.map((v) => `${at}: tolerated ${v.rule} ${v.path ?? ''}`));
    problems.push(...checkPolicy(message, { systemIds: [SYSTEM_ID], messageTypes: MESSAGE_TYPES }).map((v) => `${at}: ${v.rule}`));
    if (message.correlation_id !== story.correlation_id) problems.push(`${at}: correlation_id ${message.correlation_id}`);
    const outcome = applySequence(state, message);
    if (outcome.ok) state = outcome.next;
    else problems.push(...outcome.violations.map((v) => `${at}: ${v.rule} ${v.message}`));
  }
  return problems;
}

describe('generateStories', () => {
  it('makes only valid messages, and stories the sequence machines accept in order from an empty state', () => {
    fc.assert(
      fc.property(seed, fc.integer({ min: 1, max: 3 }), (s, stories) => {
        const generated = generateStories({ seed: s, stories, systemId: SYSTEM_ID, now: TEST_NOW });
        expect(generated).toHaveLength(stories);
        expect(generated.flatMap(problemsOf)).toEqual([]);
        const times = generated.map((story) => story.messages.map((m) => Date.parse(m.occurred_at)));
        for (const story of times) {
          expect(story).toEqual([...story].sort((a, b) => a - b));
          expect(Math.max(...story)).toBeLessThanOrEqual(TEST_NOW.getTime());
        }
        const ids = generated.flatMap((story) => story.messages.map((m) => m.message_id));
        expect(new Set(ids).size).toBe(ids.length);
        expect(new Set(generated.map((story) => story.correlation_id)).size).toBe(stories);
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same messages, ids included, for the same seed; the ids do not depend on now', () => {
    const options = { seed: 42, stories: 5, systemId: SYSTEM_ID, now: TEST_NOW };
    const first = JSON.stringify(generateStories(options));
    expect(JSON.stringify(generateStories(options))).toBe(first);
    expect(JSON.stringify(generateStories({ ...options, seed: 43 }))).not.toBe(first);
    const later = generateStories({ ...options, now: new Date(TEST_NOW.getTime() + 3_600_000) });
    const idsOf = (stories: readonly GeneratedStory[]) => stories.map((story) => [story.correlation_id, ...story.messages.map((m) => m.message_id)]);
    expect(idsOf(later)).toEqual(idsOf(JSON.parse(first) as GeneratedStory[]));
  });

  it('does not repeat ids across seeds, so runs with different seeds can share a workspace', () => {
    const runs = Array.from({ length: 50 }, (_, s) => generateStories({ seed: s, stories: 1, systemId: SYSTEM_ID, now: TEST_NOW }));
    const ids = runs.flat().flatMap((story) => [story.correlation_id, ...story.messages.map((m) => m.message_id)]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('makes every message type over a few dozen stories', () => {
    fc.assert(
      fc.property(seed, (s) => {
        const types = new Set(
          generateStories({ seed: s, stories: 40, systemId: SYSTEM_ID, now: TEST_NOW }).flatMap((story) => story.messages.map((m) => m.message_type)),
        );
        expect([...types].sort()).toEqual(MESSAGE_TYPES);
      }),
      { numRuns: 20 },
    );
  });

  it('makes only the message types asked for, and refuses a set the machines cannot start', () => {
    const messageTypes = ['telling.started', 'telling.ended', 'system.audit'];
    const generated = generateStories({ seed: 7, stories: 20, systemId: SYSTEM_ID, now: TEST_NOW, messageTypes });
    expect(new Set(generated.flatMap((story) => story.messages.map((m) => m.message_type)))).toEqual(new Set(messageTypes));
    expect(generated.flatMap(problemsOf)).toEqual([]);
    expect(() => generateStories({ seed: 7, stories: 1, systemId: SYSTEM_ID, now: TEST_NOW, messageTypes: ['link.withdrawn'] })).toThrow(
      'link.withdrawn cannot be sent without link.committed',
    );
    expect(() => generateStories({ seed: 7, stories: 1, systemId: 'Not A System', now: TEST_NOW })).toThrow(/is not a SOM system_id/);
  });

  it('narrows what an app may publish to what stories can carry: a machine without its first message is left out', () => {
    expect(generatableTypes(['link.withdrawn', 'telling.started', 'telling.ended', 'no.such_type', 'Telling.Started']).sort()).toEqual([
      'telling.ended',
      'telling.started',
    ]);
    expect(generatableTypes(['link.gate_changed'])).toEqual([]);
    expect(generatableTypes(MESSAGE_TYPES)).toEqual(MESSAGE_TYPES);
    const stories = generateStories({
      seed: 3,
      stories: 5,
      systemId: SYSTEM_ID,
      now: TEST_NOW,
      messageTypes: generatableTypes(['link.committed', 'link.withdrawn', 'story.context']),
    });
    expect(stories.flatMap(problemsOf)).toEqual([]);
  });

  it('interleaves stories keeping the order within each, the same way for the same seed', () => {
    const stories = generateStories({ seed: 9, stories: 4, systemId: SYSTEM_ID, now: TEST_NOW });
    const order = interleaveStories(stories, 9);
    expect(order).toHaveLength(stories.reduce((n, story) => n + story.messages.length, 0));
    for (const story of stories) expect(order.filter((m) => m.correlation_id === story.correlation_id)).toEqual(story.messages);
    expect(interleaveStories(stories, 9)).toEqual(order);
    // Interleaved, not one story after another.
    expect(order.map((m) => m.correlation_id)).not.toEqual(stories.flatMap((story) => story.messages.map((m) => m.correlation_id)));
  });
});
