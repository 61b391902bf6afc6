import { randomUUID } from 'node:crypto';
import { som } from '@bus/schemas';
import { applySequence, type SomMessage, type StoryState } from '@bus/som';
import { decideBatch, workspaceKey, type BatchMember } from './batch-decisions';

const W = 'wbatchdecide2';

function member(
  type: 'telling.started' | 'telling.exposed' | 'telling.ended',
  correlationId: string,
  opts: { id?: string; hash?: string; workspaceId?: string; forbidden?: boolean } = {},
): BatchMember {
  const example = som.examples[type] as unknown as SomMessage;
  const message: SomMessage = { ...example, message_id: opts.id ?? randomUUID(), correlation_id: correlationId };
  return {
    workspaceId: opts.workspaceId ?? W,
    message,
    hash: opts.hash ?? 'a'.repeat(64),
    policy: opts.forbidden ? [{ rule: 'policy.message_type', source: 'policy', message: 'not allowed' }] : [],
  };
}

/** The state a story is in after `types`, as the gateway would have stored it. */
function storedAfter(...types: Array<'telling.started' | 'telling.exposed'>): StoryState {
  let state: StoryState | null = null;
  for (const type of types) {
    const outcome = applySequence(state, member(type, 'c').message);
    if (!outcome.ok) throw new Error(`bad fixture: ${type}`);
    state = outcome.next;
  }
  return state as StoryState;
}

describe('decideBatch', () => {
  it('accepts a start and the exposure right behind it, storing one state for the correlation id', () => {
    const { decisions, nextStates } = decideBatch([member('telling.started', 'c1'), member('telling.exposed', 'c1')], new Map(), new Map());
    expect(decisions).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }]);
    expect(nextStates).toHaveLength(1);
    expect(nextStates[0]).toMatchObject({ workspaceId: W, correlationId: 'c1' });
  });

  it('checks a correlation id in arrival order: an exposure before its start is refused, the start then accepted', () => {
    const { decisions } = decideBatch([member('telling.exposed', 'c1'), member('telling.started', 'c1')], new Map(), new Map());
    expect(decisions[0]).toMatchObject({ kind: 'refused', violations: [{ rule: 'sequence.telling.not_started' }] });
    expect(decisions[1]).toEqual({ kind: 'accepted' });
  });

  it('continues from the stored state', () => {
    const stored = new Map([[workspaceKey(W, 'c1'), storedAfter('telling.started')]]);
    const { decisions } = decideBatch([member('telling.exposed', 'c1'), member('telling.started', 'c1')], new Map(), stored);
    expect(decisions[0]).toEqual({ kind: 'accepted' });
    expect(decisions[1]).toMatchObject({ kind: 'refused' });
  });

  it('answers a message_id accepted before, or earlier in the batch: duplicate with the same content, reused with other', () => {
    const prior = new Map([[workspaceKey(W, 'm-before'), 'b'.repeat(64)]]);
    const { decisions, nextStates } = decideBatch(
      [
        member('telling.started', 'c1', { id: 'm-before', hash: 'b'.repeat(64) }),
        member('telling.started', 'c1', { id: 'm-before', hash: 'c'.repeat(64) }),
        member('telling.started', 'c2', { id: 'm-new', hash: 'd'.repeat(64) }),
        member('telling.started', 'c2', { id: 'm-new', hash: 'd'.repeat(64) }),
        member('telling.started', 'c2', { id: 'm-new', hash: 'e'.repeat(64) }),
      ],
      prior,
      new Map(),
    );
    expect(decisions).toEqual([{ kind: 'duplicate' }, { kind: 'reused' }, { kind: 'accepted' }, { kind: 'duplicate' }, { kind: 'reused' }]);
    expect(nextStates.map((s) => s.correlationId)).toEqual(['c2']);
  });

  it('applies the policy after the idempotency check: a resend of an accepted message stays a duplicate', () => {
    const prior = new Map([[workspaceKey(W, 'm1'), 'a'.repeat(64)]]);
    const { decisions } = decideBatch(
      [member('telling.started', 'c1', { id: 'm1', forbidden: true }), member('telling.started', 'c3', { forbidden: true })],
      prior,
      new Map(),
    );
    expect(decisions[0]).toEqual({ kind: 'duplicate' });
    expect(decisions[1]).toMatchObject({ kind: 'refused', violations: [{ rule: 'policy.message_type' }] });
  });

  it('keeps workspaces apart: one message_id or correlation id in two workspaces are two', () => {
    const { decisions, nextStates } = decideBatch(
      [member('telling.started', 'c1', { id: 'm1' }), member('telling.started', 'c1', { id: 'm1', workspaceId: 'wother2222222' })],
      new Map(),
      new Map(),
    );
    expect(decisions).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }]);
    expect(nextStates).toHaveLength(2);
  });

  it('stores nothing for a refused member and no state for a batch of refusals', () => {
    const { decisions, nextStates } = decideBatch([member('telling.exposed', 'c9'), member('telling.ended', 'c9')], new Map(), new Map());
    expect(decisions.map((d) => d.kind)).toEqual(['refused', 'refused']);
    expect(nextStates).toEqual([]);
  });
});
