import { PacedCommits, type PartitionPosition } from './paced-commits';

const INTERVAL_MS = 1_000;

function at(partition: number, offset: number): PartitionPosition {
  return { topic: 'bus.messages.v1', partition, offset: String(offset) };
}

/** A PacedCommits whose commits, at once and late, are recorded in order. */
function paced(failLate = false) {
  const now: PartitionPosition[][] = [];
  const late: PartitionPosition[][] = [];
  const lateErrors: Array<{ err: unknown; position: PartitionPosition }> = [];
  const commits = new PacedCommits(
    INTERVAL_MS,
    async (positions) => {
      if (failLate) throw new Error('rebalance in progress');
      late.push(positions);
    },
    (err, position) => lateErrors.push({ err, position }),
  );
  const commitNow = async (positions: PartitionPosition[]) => {
    now.push(positions);
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

  it('reports a late commit that failed instead of throwing it at a slice', async () => {
    const { commits, commitNow, lateErrors } = paced(true);
    await commits.handled(at(0, 5), commitNow);
    await commits.handled(at(0, 7), commitNow);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(lateErrors).toEqual([{ err: new Error('rebalance in progress'), position: at(0, 7) }]);
  });

  it('fails a slice whose own commit failed', async () => {
    const { commits } = paced();
    await expect(commits.handled(at(0, 5), () => Promise.reject(new Error('coordinator gone')))).rejects.toThrow('coordinator gone');
  });
});
