import type { SomMessage } from './message';
import { MESSAGE_TYPES } from './schema-set';
import {
  applySequence,
  EMPTY_STORY_STATE,
  familyOf,
  parseStoryState,
  SequenceInputError,
  type SequenceOutcome,
  type StoryState,
  StoryStateError,
} from './sequence';
import { exampleMessage } from './testing';

const started = exampleMessage('telling.started');
const exposed = exampleMessage('telling.exposed');
const ended = exampleMessage('telling.ended');
const committed = exampleMessage('link.committed');
const gateOpened = exampleMessage('link.gate_changed');
const withdrawn = exampleMessage('link.withdrawn');

/** Applies messages in order; the state after the last, or the first refusal's rule ids and paths. */
function run(...messages: SomMessage[]): StoryState | Array<[string, string | undefined]> {
  let state: StoryState | null = null;
  for (const message of messages) {
    const outcome: SequenceOutcome = applySequence(state, message);
    if (!outcome.ok) return outcome.violations.map((found) => [found.rule, found.path]);
    state = outcome.next;
  }
  return state ?? EMPTY_STORY_STATE;
}

describe('familyOf', () => {
  it.each([
    ['telling.started', 'telling'],
    ['telling.exposed', 'telling'],
    ['telling.ended', 'telling'],
    ['link.committed', 'link'],
    ['link.gate_changed', 'link'],
    ['link.withdrawn', 'link'],
    ['story.context', null],
    ['skill.warning.raised', null],
    ['no.such_type', null],
    ['constructor', null],
  ])('%s → %s', (messageType, family) => {
    expect(familyOf(messageType)).toBe(family);
  });

  it('knows only message types that have schemas', () => {
    const familyTypes = ['telling.started', 'telling.exposed', 'telling.ended', 'link.committed', 'link.gate_changed', 'link.withdrawn'];
    expect(MESSAGE_TYPES.filter((type) => familyOf(type) !== null).sort()).toEqual(familyTypes.sort());
  });
});

describe('telling family: started → exposed* → ended, one telling per correlation id', () => {
  it('accepts a whole telling and records where it is', () => {
    expect(run(started)).toEqual({ version: 1, telling: { phase: 'started', telling_id: 'telling-0001', story_id: 'story-lighthouse-fox' }, links: {} });
    expect(run(started, exposed, exposed, ended)).toEqual({
      version: 1,
      telling: { phase: 'ended', telling_id: 'telling-0001', story_id: 'story-lighthouse-fox' },
      links: {},
    });
    expect(run(started, ended)).toMatchObject({ telling: { phase: 'ended' } });
  });

  it('sequence.telling.not_started: refuses exposed or ended before started', () => {
    expect(run(exposed)).toEqual([['sequence.telling.not_started', '/message_type']]);
    expect(run(ended)).toEqual([['sequence.telling.not_started', '/message_type']]);
  });

  it('sequence.telling.already_started: refuses a second start', () => {
    expect(run(started, started)).toEqual([['sequence.telling.already_started', '/message_type']]);
    expect(run(started, exposed, exampleMessage('telling.started', { '/payload/telling_id': 'telling-0002' }))).toEqual([
      ['sequence.telling.already_started', '/message_type'],
    ]);
  });

  it('sequence.telling.ended: refuses anything of the family after ended', () => {
    expect(run(started, ended, exposed)).toEqual([['sequence.telling.ended', '/message_type']]);
    expect(run(started, ended, ended)).toEqual([['sequence.telling.ended', '/message_type']]);
    expect(run(started, ended, started)).toEqual([['sequence.telling.ended', '/message_type']]);
  });

  it('sequence.telling.mismatch: refuses a telling_id or story_id other than the started one', () => {
    expect(run(started, exampleMessage('telling.exposed', { '/payload/telling_id': 'telling-0002' }))).toEqual([
      ['sequence.telling.mismatch', '/payload/telling_id'],
    ]);
    expect(run(started, exampleMessage('telling.ended', { '/payload/telling_id': 'telling-0002', '/payload/story_id': 'story-other' }))).toEqual([
      ['sequence.telling.mismatch', '/payload/telling_id'],
      ['sequence.telling.mismatch', '/payload/story_id'],
    ]);
  });
});

describe('link family: committed → gate_changed* → withdrawn, per link_id', () => {
  const otherLink = (message: string, changes: Readonly<Record<string, unknown>> = {}) =>
    exampleMessage(message, { '/payload/link_id': 'link-harbour', ...changes });

  it('accepts a whole link life and tracks the gate', () => {
    expect(run(committed)).toEqual({ version: 1, telling: null, links: { 'link-stairs-or-harbour': { phase: 'committed', gate: 'closed' } } });
    expect(run(committed, gateOpened)).toMatchObject({ links: { 'link-stairs-or-harbour': { phase: 'committed', gate: 'open' } } });
    const closedAgain = exampleMessage('link.gate_changed', { '/payload/from_state': 'open', '/payload/to_state': 'closed' });
    expect(run(committed, gateOpened, closedAgain, withdrawn)).toMatchObject({ links: { 'link-stairs-or-harbour': { phase: 'withdrawn', gate: 'closed' } } });
  });

  it('keeps links apart by link_id', () => {
    const state = run(
      committed,
      otherLink('link.committed', { '/payload/gate/state': 'open' }),
      withdrawn,
      otherLink('link.gate_changed', { '/payload/from_state': 'open', '/payload/to_state': 'hidden' }),
    );
    expect(state).toMatchObject({ links: { 'link-stairs-or-harbour': { phase: 'withdrawn' }, 'link-harbour': { phase: 'committed', gate: 'hidden' } } });
  });

  it('sequence.link.not_committed: refuses a gate change or withdrawal of an unknown link', () => {
    expect(run(gateOpened)).toEqual([['sequence.link.not_committed', '/payload/link_id']]);
    expect(run(committed, otherLink('link.withdrawn'))).toEqual([['sequence.link.not_committed', '/payload/link_id']]);
    expect(run(exampleMessage('link.withdrawn', { '/payload/link_id': 'constructor' }))).toEqual([['sequence.link.not_committed', '/payload/link_id']]);
  });

  it('sequence.link.already_committed: refuses committing a committed link again', () => {
    expect(run(committed, gateOpened, committed)).toEqual([['sequence.link.already_committed', '/payload/link_id']]);
  });

  it('sequence.link.withdrawn: refuses anything for a withdrawn link, even a new commit', () => {
    expect(run(committed, withdrawn, gateOpened)).toEqual([['sequence.link.withdrawn', '/payload/link_id']]);
    expect(run(committed, withdrawn, withdrawn)).toEqual([['sequence.link.withdrawn', '/payload/link_id']]);
    expect(run(committed, withdrawn, committed)).toEqual([['sequence.link.withdrawn', '/payload/link_id']]);
  });

  it('sequence.link.gate_mismatch: refuses a change from a state the gate is not in', () => {
    expect(run(committed, gateOpened, gateOpened)).toEqual([['sequence.link.gate_mismatch', '/payload/from_state']]);
  });

  it('accepts a change to the same state, which changes nothing', () => {
    const outcome = applySequence(run(committed) as StoryState, exampleMessage('link.gate_changed', { '/payload/to_state': 'closed' }));
    expect(outcome).toMatchObject({ ok: true, changed: false });
  });
});

describe('applySequence', () => {
  it('leaves the state alone for a type without a family', () => {
    const state = run(started) as StoryState;
    expect(applySequence(state, exampleMessage('story.context'))).toEqual({ ok: true, next: state, changed: false });
    expect(applySequence(null, exampleMessage('system.audit'))).toEqual({ ok: true, next: EMPTY_STORY_STATE, changed: false });
  });

  it('never mutates the state it is given', () => {
    const state = structuredClone(run(started, committed) as StoryState);
    const before = structuredClone(state);
    applySequence(state, exposed);
    applySequence(state, ended);
    applySequence(state, gateOpened);
    applySequence(state, withdrawn);
    expect(state).toEqual(before);
  });

  it('yields a state that survives a JSON round trip (the gateway stores it as jsonb)', () => {
    const state = run(started, exposed, committed, gateOpened) as StoryState;
    const stored = parseStoryState(JSON.parse(JSON.stringify(state)));
    expect(stored).toEqual(state);
    expect(run(started, exposed, committed, gateOpened, ended, withdrawn)).toEqual(
      [ended, withdrawn].reduce<StoryState>((current, message) => {
        const outcome = applySequence(current, message);
        if (!outcome.ok) throw new Error('refused');
        return outcome.next;
      }, stored),
    );
  });

  it('throws SequenceInputError for a message that cannot have passed validation', () => {
    const broken = { ...started, payload: { story_id: 'story-lighthouse-fox' } };
    expect(() => applySequence(null, broken)).toThrow(SequenceInputError);
    const badGate = exampleMessage('link.committed', { '/payload/gate/state': 'ajar' });
    expect(() => applySequence(null, badGate)).toThrow(SequenceInputError);
  });
});

describe('parseStoryState', () => {
  it('accepts what applySequence wrote', () => {
    expect(parseStoryState({ version: 1, telling: null, links: {} })).toEqual(EMPTY_STORY_STATE);
  });

  it.each([
    ['not an object', []],
    ['another version', { version: 2, telling: null, links: {} }],
    ['no version', { telling: null, links: {} }],
    ['a malformed telling', { version: 1, telling: { phase: 'paused', telling_id: 't', story_id: 's' }, links: {} }],
    ['a missing telling', { version: 1, links: {} }],
    ['malformed links', { version: 1, telling: null, links: [] }],
    ['a malformed link', { version: 1, telling: null, links: { l: { phase: 'committed', gate: 'ajar' } } }],
  ])('refuses %s', (_, stored) => {
    expect(() => parseStoryState(stored)).toThrow(StoryStateError);
  });
});
