import { LateCommitNotSeenError, PacedCommits, type PartitionPosition } from './paced-commits';

const INTERVAL_MS = 1_000;

function at(partition: number, offset: number): PartitionPosition {
  return { topic: 'bus.messages.v1', partition, offset: String(offset) };
}

/**
 * A PacedCommits whose commits, at once and late, are recorded in order; a late commit that lands is
 * reported committed, as kafkajs' COMMIT_OFFSETS event does. The first `failing` late commits throw,
 * the next `skipped` resolve without committing (kafkajs' commitOffsets while its runner is stopped).
 */
function paced({ failing = 0, skipped = 0 } = {}) {
  const now: PartitionPosition[][] = [];
  const late: PartitionPosition[][] = [];
  const lateErrors: Array<{ err: unknown; position: PartitionPosition }> = [];
  const commits: PacedCommits = new PacedCommits(
    INTERVAL_MS,
    async (positions) => {
      if (failing > 0) {
        failing -= 1;
        throw new Error('rebalance in progress');
      }
      if (skipped > 0) {
        skipped -= 1;
        return;
      }
      late.push(positions);
      positions.forEach((position) => commits.committed(position));
    },
    (err, position) => lateErrors.push({ err, position }),
  );
  const commitNow = async (positions: PartitionPosition[]) => {
    now.push(positions);
    positions.forEach((position) => commits.committed(position));
  };
  return { commits, commitNow, now, late, lateErrors };
}

beforeEach(() => {
  jest.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('PacedCommits', () => {
  it("commits a partition's first slice at once", async () => {
    const { commits, commitNow, now, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    expect(now).toEqual([[at(0, 5)]]);
    expect(late).toEqual([]);
  });

  it('commits the slices of one interval once, at its end, with the last position', async () => {
    const { commits, commitNow, now, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 9), commitNow);
    await commits.handled(at(0, 12), commitNow);
    expect(now).toEqual([[at(0, 5)]]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(late).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(late).toEqual([[at(0, 12)]]);
    // Nothing more is pending: no further commit however long it stays idle.
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(late).toEqual([[at(0, 12)]]);
    expect(now).toEqual([[at(0, 5)]]);
  });

  it('commits at once again once an interval has passed without a commit', async () => {
    const { commits, commitNow, now, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    await commits.handled(at(0, 6), commitNow);
    expect(now).toEqual([[at(0, 5)], [at(0, 6)]]);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(late).toEqual([]);
  });

  it('paces each partition on its own', async () => {
    const { commits, commitNow, now, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(1, 3), commitNow);
    await commits.handled(at(0, 6), commitNow);
    expect(now).toEqual([[at(0, 5)], [at(1, 3)]]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(late).toEqual([[at(0, 6)]]);
  });

  it('commits what is pending on flush, and every later slice at once', async () => {
    const { commits, commitNow, now, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    await commits.handled(at(2, 1), commitNow);
    await commits.flush();
    expect(late).toEqual([[at(0, 7)]]);
    await commits.handled(at(0, 8), commitNow);
    expect(now).toEqual([[at(0, 5)], [at(2, 1)], [at(0, 8)]]);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(late).toEqual([[at(0, 7)]]);
  });

  it('forgets what is pending after a rebalance', async () => {
    const { commits, commitNow, late } = paced();
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    commits.drop();
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    await commits.flush();
    expect(late).toEqual([]);
  });

  it('reports a late commit that failed instead of throwing it at a slice, and tries it again an interval later', async () => {
    const { commits, commitNow, late, lateErrors } = paced({ failing: 2 });
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(lateErrors).toEqual([{ err: new Error('rebalance in progress'), position: at(0, 7) }]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(lateErrors).toHaveLength(2);
    expect(late).toEqual([]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(late).toEqual([[at(0, 7)]]);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(late).toEqual([[at(0, 7)]]);
  });

  it('tries a late commit the consumer never reported committed again', async () => {
    const { commits, commitNow, late, lateErrors } = paced({ skipped: 1 });
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(lateErrors).toEqual([{ err: new LateCommitNotSeenError(), position: at(0, 7) }]);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(late).toEqual([[at(0, 7)]]);
  });

  it('lets a later position replace a failed late commit instead of trying the old one again', async () => {
    const { commits, commitNow, late } = paced({ failing: 1 });
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    await commits.handled(at(0, 9), commitNow);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(late).toEqual([[at(0, 9)]]);
  });

  it('does not try a failed late commit again after a rebalance, nor after a flush', async () => {
    // The rebalance comes while the late commit is on its way, and is why it fails.
    let lateCommits = 0;
    const rebalanced: PacedCommits = new PacedCommits(
      INTERVAL_MS,
      async () => {
        lateCommits += 1;
        rebalanced.drop();
        throw new Error('rebalance in progress');
      },
      () => undefined,
    );
    const commitNow = async () => undefined;
    await rebalanced.handled(at(0, 5), commitNow);
    await rebalanced.handled(at(0, 7), commitNow);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(lateCommits).toBe(1);

    const flushed = paced({ failing: 1 });
    await flushed.commits.handled(at(0, 5), flushed.commitNow);
    await flushed.commits.handled(at(0, 7), flushed.commitNow);
    await flushed.commits.flush();
    expect(flushed.lateErrors).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(flushed.late).toEqual([]);
  });

  it('fails a slice whose own commit failed', async () => {
    const { commits } = paced();
    await expect(commits.handled(at(0, 5), () => Promise.reject(new Error('coordinator gone')))).rejects.toThrow('coordinator gone');
  });
});
