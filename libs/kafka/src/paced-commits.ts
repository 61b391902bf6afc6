/** Where a partition's consumer stands: `offset` is the next record to read (what Kafka commits). */
export interface PartitionPosition {
  topic: string;
  partition: number;
  offset: string;
}

export type CommitOffsets = (positions: PartitionPosition[]) => Promise<void>;

interface PartitionCommits {
  lastCommitAt: number;
  /** Handled since the last commit, waiting for `timer`. */
  pending?: PartitionPosition;
  timer?: NodeJS.Timeout;
  /** The highest offset the consumer reported committed since the last drop. */
  committed?: bigint;
}

/** A late commit that did not fail but was not seen committed: kafkajs skips one while its runner is not running. */
export class LateCommitNotSeenError extends Error {
  constructor() {
    super('the late commit was not seen committed (the consumer was not running)');
    this.name = 'LateCommitNotSeenError';
  }
}

/**
 * Offset commits of handled records, at most one per partition every `intervalMs`: a commit is a
 * broker round trip and a write to __consumer_offsets, and committing after every slice made one for
 * each lone publish. A slice handled within `intervalMs` of its partition's last commit is committed
 * by a timer when the interval ends, so a partition's last position is committed at most `intervalMs`
 * after it was handled even when no record follows; a crash replays at most that much (the handlers
 * are idempotent). A late commit that failed, or that the consumer never reported committed, is tried
 * again an interval later until it lands or a rebalance drops it. After `flush` (a stop), every slice
 * is committed at once.
 */
export class PacedCommits {
  private readonly partitions = new Map<string, PartitionCommits>();
  private flushed = false;
  /** Bumped by drop(): a late commit answered after a rebalance is not tried again. */
  private generation = 0;

  /**
   * `commitLater` commits for the timer, outside any batch (the consumer's own commitOffsets);
   * `onLateCommitError` hears of each late commit that failed or was not seen committed.
   */
  constructor(
    private readonly intervalMs: number,
    private readonly commitLater: CommitOffsets,
    private readonly onLateCommitError: (err: unknown, position: PartitionPosition) => void,
  ) {}

  /**
   * Records that a partition's records before `position.offset` are handled: commits through
   * `commitNow` (the batch's own commit, which works while the consumer stops) when the partition's
   * interval is over, otherwise leaves it to the timer.
   */
  async handled(position: PartitionPosition, commitNow: CommitOffsets): Promise<void> {
    const state = this.stateOf(position);
    const now = Date.now();
    if (this.flushed || now - state.lastCommitAt >= this.intervalMs) {
      this.cancel(state);
      state.lastCommitAt = now;
      await commitNow([position]);
      return;
    }
    state.pending = position;
    this.arm(state, state.lastCommitAt + this.intervalMs - now);
  }

  /** What the consumer reports committed (kafkajs' COMMIT_OFFSETS event), batch commits and late ones alike. */
  committed(position: PartitionPosition): void {
    const state = this.stateOf(position);
    const offset = BigInt(position.offset);
    if (state.committed === undefined || offset > state.committed) state.committed = offset;
  }

  /**
   * Forgets what is pending: after a rebalance, a crash or a new join the consumer reads again from
   * the last commit, and a partition may be another member's, whose position a late commit would
   * move back.
   */
  drop(): void {
    this.generation += 1;
    for (const state of this.partitions.values()) {
      this.cancel(state);
      state.committed = undefined;
    }
  }

  /** Commits everything pending now, and every later slice at once: called before the consumer stops. */
  async flush(): Promise<void> {
    this.flushed = true;
    await Promise.all([...this.partitions.values()].map((state) => this.commitPending(state)));
  }

  private arm(state: PartitionCommits, delayMs: number): void {
    if (state.timer !== undefined) return;
    state.timer = setTimeout(() => void this.commitPending(state), delayMs);
    // A stop flushes what is pending; the timer alone must not hold a process open.
    state.timer.unref();
  }

  private async commitPending(state: PartitionCommits): Promise<void> {
    const position = state.pending;
    this.cancel(state);
    if (position === undefined) return;
    const generation = this.generation;
    state.lastCommitAt = Date.now();
    let failure: unknown;
    try {
      await this.commitLater([position]);
      if (state.committed === undefined || state.committed < BigInt(position.offset)) failure = new LateCommitNotSeenError();
    } catch (err) {
      failure = err;
    }
    if (failure === undefined) return;
    this.onLateCommitError(failure, position);
    // A later slice's position, pending meanwhile, covers this one; a flush does not try again.
    if (generation !== this.generation || this.flushed || state.pending !== undefined) return;
    state.pending = position;
    this.arm(state, this.intervalMs);
  }

  private cancel(state: PartitionCommits): void {
    if (state.timer !== undefined) clearTimeout(state.timer);
    state.timer = undefined;
    state.pending = undefined;
  }

  private stateOf(position: Pick<PartitionPosition, 'topic' | 'partition'>): PartitionCommits {
    const key = `${position.topic}\u0000${position.partition}`;
    let state = this.partitions.get(key);
    if (state === undefined) {
      state = { lastCommitAt: -Infinity };
      this.partitions.set(key, state);
    }
    return state;
  }
}
