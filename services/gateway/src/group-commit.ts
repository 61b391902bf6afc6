import type { Logger } from 'pino';
import { Histogram, type Registry } from 'prom-client';
import { METRICS } from '@bus/observability';
import { bodyDigest } from '@bus/som';
import { decideBatch, type BatchMember, type MemberDecision } from './batch-decisions';
import { CommitTimeoutError, deadlineIn, earliest, type Deadline } from './deadline';
import type { AcceptedMessage, PublishStore } from './publish-store';

/** A publish ready to commit: checked for everything that depends on its content alone. */
export interface PublishToCommit extends BatchMember {
  /** The producer connection that published it. */
  producerConnectionId: string;
  /** The producer's exact bytes, sent to Kafka unchanged. */
  bytes: Buffer;
  family: string | null;
  /** The W3C trace context of the publish request, for the Kafka record's header. */
  traceparent: string | null;
}

/** A record of bus.messages.v1 as the gateway sends it. */
export interface RecordToSend {
  workspaceId: string;
  correlationId: string;
  value: Buffer;
  headers: {
    messageId: string;
    messageType: string;
    family: string | null;
    producerConnectionId: string;
    contentHash: string;
    acceptedAt: Date;
    traceparent: string | null;
  };
}

/** Sends records to Kafka in one request with acks=all; resolves with each one's partition and offset, in order. */
export type CommitToKafka = (records: readonly RecordToSend[]) => Promise<Array<{ partition: number; offset: string }>>;

export interface GroupCommitDeps {
  store: PublishStore;
  commitToKafka: CommitToKafka;
  /**
   * PUBLISH_COMMIT_TIMEOUT: each publish is answered within it, counted from its call to `commit` —
   * its wait for the batch ahead of it and its own batch's transaction (locks, statements, the Kafka
   * ack, COMMIT) together.
   */
  commitTimeoutMs: number;
  /** Reports a Kafka send that landed after its batch was given up. */
  logger: Logger;
  metrics: Registry;
  /** Most publishes one batch carries (one transaction, one produce request). */
  maxBatch?: number;
  now?: () => Date;
}

interface Waiting {
  publish: PublishToCommit;
  /** commitTimeoutMs from the call to `commit`. */
  deadline: Deadline;
  /** Gives the publish up at its deadline while it still waits for the batch ahead of it. */
  expiry?: NodeJS.Timeout;
  resolve: (decision: MemberDecision) => void;
  reject: (err: unknown) => void;
}

const DEFAULT_MAX_BATCH = 256;

/**
 * Group commit (docs/architecture.md#data-flow step 5): publishes that arrive while a batch is committing wait for it and
 * then go together in the next — one transaction holding all their story locks, one Kafka produce
 * request, one COMMIT. A publish arriving when nothing commits goes at once, alone, so an idle bus
 * adds no wait. Members are decided in arrival order by decideBatch, so each answer is what the
 * publish would have got alone at its place; a failure of the batch fails every member (503), and
 * since nothing was committed, none of them is ever delivered (invariant A).
 *
 * Deadlines belong to publishes, not batches: a publish still queued behind a slow batch when its
 * deadline passes leaves the queue and is answered 503 then; a batch must finish by the earliest
 * deadline of its members, so none of them is answered late, and the batch never sends to Kafka or
 * commits after any of them was answered 503.
 */
export class GroupCommitter {
  private readonly maxBatch: number;
  private readonly now: () => Date;
  private readonly batchSize: Histogram;
  private readonly queue: Waiting[] = [];
  private committing = false;

  constructor(private readonly deps: GroupCommitDeps) {
    this.maxBatch = deps.maxBatch ?? DEFAULT_MAX_BATCH;
    this.now = deps.now ?? (() => new Date());
    this.batchSize = new Histogram({
      ...METRICS.publishBatchSize,
      help: 'Publishes committed together in one transaction and one Kafka produce request (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [deps.metrics],
    });
  }

  /**
   * Commits one publish together with whatever else is waiting: resolves with its decision once its
   * batch committed (accepted: after both the Kafka ack and the Postgres commit), or rejects with the
   * batch's failure (Kafka, Postgres or the deadline) — then nothing of the batch was accepted — or
   * with CommitTimeoutError when its deadline passed before a batch took it. Called once the publish
   * was authenticated, read and validated, so its deadline runs from (nearly) its arrival.
   */
  commit(publish: PublishToCommit): Promise<MemberDecision> {
    return new Promise<MemberDecision>((resolve, reject) => {
      const waiting: Waiting = { publish, deadline: deadlineIn(this.deps.commitTimeoutMs), resolve, reject };
      this.queue.push(waiting);
      if (!this.committing) void this.drain();
      else waiting.expiry = setTimeout(() => this.giveUpWaiting(waiting), waiting.deadline.remainingMs());
    });
  }

  private outOfTime(w: Waiting): void {
    w.reject(new CommitTimeoutError(this.deps.commitTimeoutMs, 'the batch ahead of it'));
  }

  /** The expiry timer of a queued publish: it leaves the queue (once a batch took it, the batch answers it). */
  private giveUpWaiting(w: Waiting): void {
    const at = this.queue.indexOf(w);
    if (at < 0) return;
    this.queue.splice(at, 1);
    this.outOfTime(w);
  }

  /** The next batch: up to maxBatch of the queue, in arrival order, those already out of time answered instead. */
  private nextBatch(): Waiting[] {
    const batch: Waiting[] = [];
    for (const w of this.queue.splice(0, this.maxBatch)) {
      clearTimeout(w.expiry);
      // Its expiry timer is due but has not run yet: as a member it would leave the batch no time at all.
      if (w.deadline.remainingMs() === 0) this.outOfTime(w);
      else batch.push(w);
    }
    return batch;
  }

  private async runBatch(batch: Waiting[]): Promise<void> {
    this.batchSize.observe(batch.length);
    try {
      const decisions = await commitBatch(
        this.deps,
        batch.map((w) => w.publish),
        earliest(batch.map((w) => w.deadline)),
        this.now,
      );
      batch.forEach((w, i) => w.resolve(decisions[i] as MemberDecision));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }

  private async drain(): Promise<void> {
    this.committing = true;
    while (this.queue.length > 0) {
      const batch = this.nextBatch();
      if (batch.length > 0) await this.runBatch(batch);
    }
    this.committing = false;
  }
}

export function createGroupCommitter(deps: GroupCommitDeps): GroupCommitter {
  return new GroupCommitter(deps);
}

/**
 * One batch's transaction: locks, the members' decisions, the Kafka send of the accepted ones, their
 * records, COMMIT — all by `deadline` (the earliest of the members'): the answer never waits past it
 * (not even for a rollback queued behind a slow statement), and the transaction never sends to Kafka
 * or commits after it.
 */
async function commitBatch(deps: GroupCommitDeps, members: readonly PublishToCommit[], deadline: Deadline, now: () => Date): Promise<MemberDecision[]> {
  // What the commit waits for, named in the timeout's cause (the log says why a publish was given up).
  let waitingFor = 'the story locks (and the reads under them)';
  const stories = members.map((m) => ({ workspaceId: m.workspaceId, correlationId: m.message.correlation_id }));
  const messages = members.map((m) => ({ workspaceId: m.workspaceId, messageId: m.message.message_id }));
  // Read under the locks: a racing publish of the same message_id or correlation id elsewhere has
  // committed or waits for these locks.
  const transaction = deps.store.withStoryLocks({ stories, messages, lockTimeoutMs: deadline.remainingMs() }, async (tx) => {
    const { decisions, nextStates } = decideBatch(members, tx.accepted, tx.storyStates);
    const accepted = members.filter((_, i) => decisions[i]?.kind === 'accepted');
    if (accepted.length === 0) return decisions;
    const acceptedAt = now();
    // A batch already answered 503 (the locks came too late) sends nothing.
    deadline.check(waitingFor);
    waitingFor = 'the Kafka acknowledgement';
    const sent = deps.commitToKafka(accepted.map((m) => recordOf(m, acceptedAt)));
    const placed = await deadline.race(sent, waitingFor, (late) => {
      // The records landed without their acceptance: delivery waits DELIVERY_ACCEPTANCE_WAIT for it,
      // then quarantines them (acceptance.missing), so they are never delivered (invariant A). Said
      // here so the quarantine has a visible reason; the producers' retries are accepted once.
      if (late.status === 'fulfilled') {
        deps.logger.warn(
          { records: late.value.length, message_ids: accepted.map((m) => m.message.message_id) },
          'Kafka acknowledged records after their publish had timed out; delivery will quarantine them (acceptance.missing)',
        );
      }
    });
    tx.record(
      accepted.map((m, i): AcceptedMessage => {
        const { partition, offset } = placed[i] as { partition: number; offset: string };
        return {
          workspaceId: m.workspaceId,
          messageId: m.message.message_id,
          contentHash: m.hash,
          bodySha256: bodyDigest(m.bytes),
          messageType: m.message.message_type,
          correlationId: m.message.correlation_id,
          producerConnectionId: m.producerConnectionId,
          acceptedAt,
          kafkaPartition: partition,
          kafkaOffset: offset,
        };
      }),
      nextStates.map((s) => ({ ...s, updatedAt: acceptedAt })),
    );
    // Never commit what was answered 503.
    deadline.check(waitingFor);
    waitingFor = 'Postgres (recording the acceptances and COMMIT)';
    return decisions;
  });
  return deadline.race(transaction, () => waitingFor);
}

function recordOf(m: PublishToCommit, acceptedAt: Date): RecordToSend {
  return {
    workspaceId: m.workspaceId,
    correlationId: m.message.correlation_id,
    value: m.bytes,
    headers: {
      messageId: m.message.message_id,
      messageType: m.message.message_type,
      family: m.family,
      producerConnectionId: m.producerConnectionId,
      contentHash: m.hash,
      acceptedAt,
      traceparent: m.traceparent,
    },
  };
}
