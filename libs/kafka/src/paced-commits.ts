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
}

/**
 * Offset commits of handled records, at most one per partition every `intervalMs`: a commit is a
 * broker round trip and a write to __consumer_offsets, and committing after every slice made one for
 * each lone publish. A slice handled within `intervalMs` of its partition's last commit is committed
 * by a timer when the interval ends, so a partition's last position is committed at most `intervalMs`
 * after it was handled even when no record follows; a crash replays at most that much (the handlers
 * are idempotent). After `flush` (a stop), every slice is committed at once.
 */
export class PacedCommits {
  private readonly partitions = new Map<string, PartitionCommits>();
  private flushed = false;

  /**
   * `commitLater` commits for the timer, outside any batch (the consumer's own commitOffsets);
   * `onLateCommitError` hears of its failures, which only mean a longer replay after a crash.
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
    if (state.timer !== undefined) return;
    state.timer = setTimeout(() => void this.commitPending(state), state.lastCommitAt + this.intervalMs - now);
    // A stop flushes what is pending; the timer alone must not hold a process open.
    state.timer.unref();
  }

  /**
   * Forgets what is pending: after a rebalance a partition may be another member's, which replays
   * from the last commit, and a late commit would move its position back.
   */
  drop(): void {
    for (const state of this.partitions.values()) this.cancel(state);
  }

  /** Commits everything pending now, and every later slice at once: called before the consumer stops. */
  async flush(): Promise<void> {
    this.flushed = true;
    await Promise.all([...this.partitions.values()].map((state) => this.commitPending(state)));
  }

  private async commitPending(state: PartitionCommits): Promise<void> {
    const position = state.pending;
    this.cancel(state);
    if (position === undefined) return;
    state.lastCommitAt = Date.now();
    try {
      await this.commitLater([position]);
    } catch (err) {
      this.onLateCommitError(err, position);
    }
  }

  private cancel(state: PartitionCommits): void {
    if (state.timer !== undefined) clearTimeout(state.timer);
    state.timer = undefined;
    state.pending = undefined;
  }

  private stateOf(position: PartitionPosition): PartitionCommits {
    const key = `${position.topic}\u0000${position.partition}`;
    let state = this.partitions.get(key);
    if (state === undefined) {
      state = { lastCommitAt: -Infinity };
      this.partitions.set(key, state);
    }
    return state;
  }
}
