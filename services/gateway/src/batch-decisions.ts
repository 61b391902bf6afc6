import { applySequence, parseStoryState, type SomMessage, type StoryState, type Violation } from '@bus/som';

/** One publish of a group commit, after parse, schema and conformance passed. */
export interface BatchMember {
  workspaceId: string;
  message: SomMessage;
  /** contentHash of the message: what "same content" means for a resend. */
  hash: string;
  /** The policy check's violations (empty: allowed). Applied after the idempotency check, as a lone publish does. */
  policy: readonly Violation[];
}

/** What a member's publish comes to, exactly as it would alone at its place in arrival order. */
export type MemberDecision = { kind: 'accepted' } | { kind: 'duplicate' } | { kind: 'reused' } | { kind: 'refused'; violations: readonly Violation[] };

/** A correlation id's story state after the batch, to be stored. */
export interface NextStoryState {
  workspaceId: string;
  correlationId: string;
  state: StoryState;
}

/** The key of a message id or a correlation id within its workspace (workspace ids never contain '/'). */
export function workspaceKey(workspaceId: string, id: string): string {
  return `${workspaceId}/${id}`;
}

/**
 * Decides every member of a group commit in arrival order, from what Postgres held when the batch's
 * locks were taken: `prior` maps workspaceKey(workspace, message_id) to the stored content hash,
 * `stored` maps workspaceKey(workspace, correlation_id) to the stored story state. Each member sees
 * the members before it as if they had committed alone: a message_id accepted earlier in the batch is a
 * duplicate (same content) or reused (other content), and a correlation id's sequence runs through the
 * states the earlier members produced. Returns each member's decision and the story states that changed.
 */
export function decideBatch(
  members: readonly BatchMember[],
  prior: ReadonlyMap<string, string>,
  stored: ReadonlyMap<string, unknown>,
): { decisions: MemberDecision[]; nextStates: NextStoryState[] } {
  const hashes = new Map(prior);
  const states = new Map<string, StoryState | null>();
  const changed = new Map<string, NextStoryState>();
  const decisions = members.map((member): MemberDecision => {
    const { message, workspaceId } = member;
    const idKey = workspaceKey(workspaceId, message.message_id);
    const acceptedHash = hashes.get(idKey);
    if (acceptedHash !== undefined) return acceptedHash === member.hash ? { kind: 'duplicate' } : { kind: 'reused' };
    if (member.policy.length > 0) return { kind: 'refused', violations: member.policy };
    const storyKey = workspaceKey(workspaceId, message.correlation_id);
    if (!states.has(storyKey)) {
      const raw = stored.get(storyKey);
      states.set(storyKey, raw === undefined || raw === null ? null : parseStoryState(raw));
    }
    const outcome = applySequence(states.get(storyKey) ?? null, message);
    if (!outcome.ok) return { kind: 'refused', violations: outcome.violations };
    hashes.set(idKey, member.hash);
    if (outcome.changed) {
      states.set(storyKey, outcome.next);
      changed.set(storyKey, { workspaceId, correlationId: message.correlation_id, state: outcome.next });
    }
    return { kind: 'accepted' };
  });
  return { decisions, nextStates: [...changed.values()] };
}
