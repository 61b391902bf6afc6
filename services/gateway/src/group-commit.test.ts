import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Registry } from 'prom-client';
import { som } from '@bus/schemas';
import type { SomMessage } from '@bus/som';
import type { MemberDecision } from './batch-decisions';
import { CommitTimeoutError } from './deadline';
import { createGroupCommitter, type PublishToCommit, type RecordToSend } from './group-commit';
import type { AcceptedMessage, PublishStore, StoryLockScope } from './publish-store';

const TIMEOUT_MS = 1_000;

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

function publish(correlationId = `c-${randomUUID()}`): PublishToCommit {
  const message: SomMessage = { ...(som.examples['telling.started'] as unknown as SomMessage), message_id: randomUUID(), correlation_id: correlationId };
  return {
    workspaceId: 'wgroupcommit',
    message,
    hash: 'a'.repeat(64),
    policy: [],
    producerConnectionId: 'cgroupcommit',
    bytes: Buffer.from(JSON.stringify(message)),
    family: null,
    traceparent: null,
  };
}

/**
 * A store that holds no locks and reads nothing (every publish is new): it records each transaction's
 * lock timeout and what it committed. A Kafka send is a promise the test settles, one per batch.
 */
function harness() {
  const lockTimeouts: number[] = [];
  const committed: string[] = [];
  // The group commit uses the store's transaction only.
  const store: Pick<PublishStore, 'withStoryLocks'> = {
    withStoryLocks: async <T>(scope: StoryLockScope, work: Parameters<PublishStore['withStoryLocks']>[1]) => {
      lockTimeouts.push(scope.lockTimeoutMs);
      let recorded: readonly AcceptedMessage[] = [];
      const result = await work({ accepted: new Map(), storyStates: new Map(), record: (messages) => (recorded = messages) });
      committed.push(...recorded.map((m) => m.messageId));
      return result as T;
    },
  };
  const sends: Array<{ records: readonly RecordToSend[]; at: number; ack: () => void }> = [];
  const committer = createGroupCommitter({
    store: store as PublishStore,
    commitToKafka: (records) =>
      new Promise((resolve) => sends.push({ records, at: Date.now(), ack: () => resolve(records.map((_, i) => ({ partition: 0, offset: String(i) }))) })),
    commitTimeoutMs: TIMEOUT_MS,
    logger: pino({ level: 'silent' }),
    metrics: new Registry(),
  });
  return { committer, lockTimeouts, committed, sends };
}

/** The outcome of a commit and when it settled (fake time since `start`). */
function settled(commit: Promise<MemberDecision>, start: number) {
  const outcome: { at?: number; decision?: MemberDecision; error?: unknown } = {};
  commit.then(
    (decision) => Object.assign(outcome, { at: Date.now() - start, decision }),
    (error: unknown) => Object.assign(outcome, { at: Date.now() - start, error }),
  );
  return outcome;
}

describe('createGroupCommitter', () => {
  it('commits a publish at once when nothing else commits, and the ones arriving meanwhile together after it', async () => {
    const { committer, sends, committed } = harness();
    const first = publish();
    const a = settled(committer.commit(first), Date.now());
    await jest.advanceTimersByTimeAsync(0);
    expect(sends).toHaveLength(1);
    const later = [publish(), publish()];
    const b = later.map((p) => settled(committer.commit(p), Date.now()));
    await jest.advanceTimersByTimeAsync(10);
    expect(sends).toHaveLength(1);
    sends[0]!.ack();
    await jest.advanceTimersByTimeAsync(0);
    expect(a.decision).toEqual({ kind: 'accepted' });
    expect(sends).toHaveLength(2);
    expect(sends[1]!.records.map((r) => r.headers.messageId)).toEqual(later.map((p) => p.message.message_id));
    sends[1]!.ack();
    await jest.advanceTimersByTimeAsync(0);
    expect(b.map((o) => o.decision)).toEqual([{ kind: 'accepted' }, { kind: 'accepted' }]);
    expect(committed).toEqual([first, ...later].map((p) => p.message.message_id));
  });

  it('answers a publish that arrives while a slow batch runs by its own deadline, counted from its arrival', async () => {
    const { committer, sends } = harness();
    const start = Date.now();
    const slow = settled(committer.commit(publish()), start);
    await jest.advanceTimersByTimeAsync(600);
    const queued = settled(committer.commit(publish()), start);
    // The slow batch gives up at its deadline; the queued publish's batch then has what is left of its own.
    await jest.advanceTimersByTimeAsync(400);
    expect(slow).toMatchObject({ at: TIMEOUT_MS, error: new CommitTimeoutError(TIMEOUT_MS, 'the Kafka acknowledgement') });
    expect(queued.at).toBeUndefined();
    await jest.advanceTimersByTimeAsync(599);
    expect(queued.at).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(queued).toMatchObject({ at: 600 + TIMEOUT_MS, error: expect.any(CommitTimeoutError) });
    expect(sends.map((s) => s.at - start)).toEqual([0, TIMEOUT_MS]);
  });

  it('gives a batch the earliest deadline of its members: none is answered late, nothing is committed after a 503', async () => {
    const { committer, sends, lockTimeouts, committed } = harness();
    const start = Date.now();
    const slow = settled(committer.commit(publish()), start);
    await jest.advanceTimersByTimeAsync(300);
    const early = settled(committer.commit(publish()), start);
    await jest.advanceTimersByTimeAsync(400);
    const late = settled(committer.commit(publish()), start);
    await jest.advanceTimersByTimeAsync(300);
    expect(slow.at).toBe(TIMEOUT_MS);
    // The next batch (early and late) started at 1000 ms with what was left of the earlier one's budget.
    expect(lockTimeouts).toEqual([TIMEOUT_MS, 300]);
    await jest.advanceTimersByTimeAsync(300);
    expect(early).toMatchObject({ at: 300 + TIMEOUT_MS, error: new CommitTimeoutError(TIMEOUT_MS, 'the Kafka acknowledgement') });
    expect(late).toMatchObject({ at: 300 + TIMEOUT_MS, error: new CommitTimeoutError(TIMEOUT_MS, 'the Kafka acknowledgement') });
    // Kafka acknowledges both batches after their answers: neither is committed.
    for (const send of sends) send.ack();
    await jest.advanceTimersByTimeAsync(0);
    expect(committed).toEqual([]);
  });

  it('answers a publish whose deadline passed before a batch could take it without sending it', async () => {
    const { committer, sends } = harness();
    const start = Date.now();
    const slow = settled(committer.commit(publish()), start);
    // Arrives in the same millisecond: its deadline is the running batch's.
    const behind = settled(committer.commit(publish()), start);
    await jest.advanceTimersByTimeAsync(TIMEOUT_MS);
    expect(slow).toMatchObject({ at: TIMEOUT_MS, error: new CommitTimeoutError(TIMEOUT_MS, 'the Kafka acknowledgement') });
    expect(behind).toMatchObject({ at: TIMEOUT_MS, error: new CommitTimeoutError(TIMEOUT_MS, 'the batch ahead of it') });
    expect(sends).toHaveLength(1);
  });
});
