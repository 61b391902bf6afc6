/**
 * Sequence rules (409): explicit state machines over the story state of one correlation id. The
 * gateway keeps one StoryState per (workspace, correlation_id) as JSON, feeds it with each message in
 * acceptance order and stores `next` when the message is accepted. docs/som.md draws the machines.
 *
 *   telling (one per correlation id):  (none) --started--> started --exposed*--> started --ended--> ended
 *   link (one per link_id):            (none) --committed--> committed --gate_changed*--> committed --withdrawn--> withdrawn
 */
import type { SomMessage } from './message';
import { type RuleId, violation } from './rules';
import type { Violation } from '@bus/contracts';

export type Family = 'telling' | 'link';
export type GateState = 'open' | 'closed' | 'hidden';

/** Bumped when the shape of StoryState changes; parseStoryState then upgrades or refuses older shapes. */
export const STORY_STATE_VERSION = 1;

export interface TellingState {
  readonly phase: 'started' | 'ended';
  readonly telling_id: string;
  readonly story_id: string;
}

export interface LinkState {
  readonly phase: 'committed' | 'withdrawn';
  readonly gate: GateState;
}

/** Plain JSON, stored as is (jsonb). Withdrawn links stay, so that nothing can follow a withdrawal. */
export interface StoryState {
  readonly version: typeof STORY_STATE_VERSION;
  readonly telling: TellingState | null;
  /** Keyed by link_id. */
  readonly links: Readonly<Record<string, LinkState>>;
}

export type SequenceOutcome =
  { readonly ok: true; readonly next: StoryState; readonly changed: boolean } | { readonly ok: false; readonly violations: readonly Violation[] };

/** The state of a correlation id no message has touched yet. */
export const EMPTY_STORY_STATE: StoryState = Object.freeze({ version: STORY_STATE_VERSION, telling: null, links: Object.freeze({}) });

/** A stored story state that is not one this code wrote: corrupt, or of an unknown version. */
export class StoryStateError extends Error {
  override readonly name = 'StoryStateError';
}

/** applySequence was handed a message that did not pass validate(): a bug in the caller. */
export class SequenceInputError extends Error {
  override readonly name = 'SequenceInputError';
}

type Transition = (state: StoryState, message: SomMessage) => SequenceOutcome;

const MACHINES: Readonly<Record<Family, Readonly<Record<string, Transition>>>> = {
  telling: {
    'telling.started': startTelling,
    'telling.exposed': (state, message) => continueTelling(state, message, 'started'),
    'telling.ended': (state, message) => continueTelling(state, message, 'ended'),
  },
  link: {
    'link.committed': commitLink,
    'link.gate_changed': changeGate,
    'link.withdrawn': withdrawLink,
  },
};

const TRANSITIONS: ReadonlyMap<string, { family: Family; transition: Transition }> = new Map(
  (Object.keys(MACHINES) as Family[]).flatMap((family) =>
    Object.entries(MACHINES[family]).map(([messageType, transition]) => [messageType, { family, transition }] as const),
  ),
);

/** The sequence family of a message type (the `family` of a 202), or null for types without one. */
export function familyOf(messageType: string): Family | null {
  return TRANSITIONS.get(messageType)?.family ?? null;
}

/**
 * Applies a validated message to the story state of its correlation id (null: none stored yet).
 * Never mutates `state`. `changed` is false when `next` is `state` itself, e.g. for a type without a
 * family, so the caller can skip the write.
 */
export function applySequence(state: StoryState | null, message: SomMessage): SequenceOutcome {
  const current = state ?? EMPTY_STORY_STATE;
  const machine = TRANSITIONS.get(message.message_type);
  return machine === undefined ? unchanged(current) : machine.transition(current, message);
}

/** Reads a stored story state, refusing anything this code would not have written. */
export function parseStoryState(stored: unknown): StoryState {
  if (!isRecord(stored)) throw new StoryStateError('The story state is not an object');
  if (stored['version'] !== STORY_STATE_VERSION) {
    throw new StoryStateError(`Story state version ${JSON.stringify(stored['version'])} is not ${STORY_STATE_VERSION}`);
  }
  const { telling, links } = stored;
  if (telling !== null && !isTellingState(telling)) throw new StoryStateError('The story state has a malformed telling');
  if (!isRecord(links) || !Object.values(links).every(isLinkState)) throw new StoryStateError('The story state has malformed links');
  return stored as unknown as StoryState;
}

// --- telling --------------------------------------------------------------------------------------

function startTelling(state: StoryState, message: SomMessage): SequenceOutcome {
  const { telling } = state;
  if (telling?.phase === 'ended')
    return refuse(
      'sequence.telling.ended',
      `Telling ${telling.telling_id} has ended on this correlation id; start a new telling under a new correlation id`,
      '/message_type',
    );
  if (telling?.phase === 'started')
    return refuse('sequence.telling.already_started', `Telling ${telling.telling_id} is under way on this correlation id`, '/message_type');
  const started: TellingState = { phase: 'started', telling_id: payloadText(message, 'telling_id'), story_id: payloadText(message, 'story_id') };
  return changed({ ...state, telling: started });
}

function continueTelling(state: StoryState, message: SomMessage, phase: TellingState['phase']): SequenceOutcome {
  const { telling } = state;
  if (telling === null) return refuse('sequence.telling.not_started', `${message.message_type} before telling.started on this correlation id`, '/message_type');
  if (telling.phase === 'ended') return refuse('sequence.telling.ended', `Telling ${telling.telling_id} has ended on this correlation id`, '/message_type');
  const mismatches = (['telling_id', 'story_id'] as const).flatMap((field) => {
    const sent = payloadText(message, field);
    return sent === telling[field]
      ? []
      : [
          violation(
            'sequence.telling.mismatch',
            `${field} is ${sent}; the telling under way on this correlation id has ${telling[field]}`,
            `/payload/${field}`,
          ),
        ];
  });
  if (mismatches.length > 0) return { ok: false, violations: mismatches };
  return phase === telling.phase ? unchanged(state) : changed({ ...state, telling: { ...telling, phase } });
}

// --- link -----------------------------------------------------------------------------------------

function commitLink(state: StoryState, message: SomMessage): SequenceOutcome {
  const linkId = payloadText(message, 'link_id');
  const link = linkOf(state, linkId);
  if (link?.phase === 'withdrawn')
    return refuse('sequence.link.withdrawn', `Link ${linkId} was withdrawn on this correlation id; commit it under a new link_id`, '/payload/link_id');
  if (link?.phase === 'committed')
    return refuse('sequence.link.already_committed', `Link ${linkId} is already committed on this correlation id`, '/payload/link_id');
  return withLink(state, linkId, { phase: 'committed', gate: gateState(payloadText(message, 'gate', 'state')) });
}

function changeGate(state: StoryState, message: SomMessage): SequenceOutcome {
  const live = liveLink(state, message);
  if (!('link' in live)) return live;
  const { linkId, link } = live;
  const fromState = gateState(payloadText(message, 'from_state'));
  if (fromState !== link.gate)
    return refuse('sequence.link.gate_mismatch', `from_state is ${fromState} but the gate of link ${linkId} is ${link.gate}`, '/payload/from_state');
  const toState = gateState(payloadText(message, 'to_state'));
  // A change to the same state is reported by conformance (tolerated) and changes nothing here.
  return toState === link.gate ? unchanged(state) : withLink(state, linkId, { ...link, gate: toState });
}

function withdrawLink(state: StoryState, message: SomMessage): SequenceOutcome {
  const live = liveLink(state, message);
  if (!('link' in live)) return live;
  return withLink(state, live.linkId, { ...live.link, phase: 'withdrawn' });
}

/** The committed, not withdrawn, link a gate change or withdrawal is about; else the refusal. */
function liveLink(state: StoryState, message: SomMessage): { linkId: string; link: LinkState } | SequenceOutcome {
  const linkId = payloadText(message, 'link_id');
  const link = linkOf(state, linkId);
  if (link === undefined)
    return refuse(
      'sequence.link.not_committed',
      `${message.message_type} for link ${linkId}, which is not committed on this correlation id`,
      '/payload/link_id',
    );
  if (link.phase === 'withdrawn') return refuse('sequence.link.withdrawn', `Link ${linkId} was withdrawn on this correlation id`, '/payload/link_id');
  return { linkId, link };
}

function linkOf(state: StoryState, linkId: string): LinkState | undefined {
  // hasOwn: a link_id such as "constructor" must not find Object.prototype's member.
  return Object.hasOwn(state.links, linkId) ? state.links[linkId] : undefined;
}

function withLink(state: StoryState, linkId: string, link: LinkState): SequenceOutcome {
  return changed({ ...state, links: { ...state.links, [linkId]: link } });
}

// --- helpers --------------------------------------------------------------------------------------

function refuse(rule: RuleId, message: string, path: string): SequenceOutcome {
  return { ok: false, violations: [violation(rule, message, path)] };
}

function changed(next: StoryState): SequenceOutcome {
  return { ok: true, next, changed: true };
}

function unchanged(state: StoryState): SequenceOutcome {
  return { ok: true, next: state, changed: false };
}

/** A string field of the payload, at a path of property names. */
function payloadText(message: SomMessage, ...path: string[]): string {
  let value: unknown = message.payload;
  for (const key of path) value = isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined;
  if (typeof value !== 'string') {
    throw new SequenceInputError(`${message.message_type} has no string payload.${path.join('.')}; validate the message before applySequence`);
  }
  return value;
}

const GATE_STATES: readonly string[] = ['open', 'closed', 'hidden'] satisfies GateState[];

function gateState(value: string): GateState {
  if (!GATE_STATES.includes(value)) throw new SequenceInputError(`${value} is not a gate state; validate the message before applySequence`);
  return value as GateState;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isTellingState(value: unknown): value is TellingState {
  return (
    isRecord(value) &&
    (value['phase'] === 'started' || value['phase'] === 'ended') &&
    typeof value['telling_id'] === 'string' &&
    typeof value['story_id'] === 'string'
  );
}

function isLinkState(value: unknown): value is LinkState {
  return (
    isRecord(value) &&
    (value['phase'] === 'committed' || value['phase'] === 'withdrawn') &&
    typeof value['gate'] === 'string' &&
    GATE_STATES.includes(value['gate'])
  );
}
