import { pacedReads } from './paced-reads';

/** A read the test finishes by hand, recording each read's key and the fake clock when it started. */
function manualReads() {
  const reads: Array<{ key: string; startedAt: number; finish: (err?: Error) => void }> = [];
  const read = (key: string) =>
    new Promise<string>((resolve, reject) => {
      const n = reads.length;
      reads.push({ key, startedAt: Date.now(), finish: (err) => (err ? reject(err) : resolve(`${key} read ${n}`)) });
    });
  return { reads, read };
}

// Nine times the read's time, as pull-api paces a consumer's queue counts.
const ninefold = (ms: number) => 9 * ms;

describe('pacedReads', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  /** Lets the reads' promise chains run (no timer moves). */
  const settled = () => jest.advanceTimersByTimeAsync(0);

  it('reads at once for a lone caller', async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    const answer = paced('a');
    await settled();
    expect(reads.map((r) => [r.key, r.startedAt])).toEqual([['a', 0]]);
    reads[0]!.finish();
    await expect(answer).resolves.toBe('a read 0');
  });

  it('gives callers who came during a read the next read, started the pause after it ended', async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    const first = paced('a');
    await settled();
    const later = [paced('a'), paced('a')];
    await jest.advanceTimersByTimeAsync(100);
    reads[0]!.finish();
    await expect(first).resolves.toBe('a read 0');
    // Not the running read's answer: that read started before they called.
    await jest.advanceTimersByTimeAsync(899);
    expect(reads).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(reads.map((r) => r.startedAt)).toEqual([0, 1000]);
    reads[1]!.finish();
    await expect(Promise.all(later)).resolves.toEqual(['a read 1', 'a read 1']);
  });

  it('makes a caller that comes back within the pause wait for it, then read afresh', async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    const first = paced('a');
    await jest.advanceTimersByTimeAsync(50);
    reads[0]!.finish();
    await expect(first).resolves.toBe('a read 0');
    const again = paced('a');
    await jest.advanceTimersByTimeAsync(449);
    expect(reads).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(reads.map((r) => r.startedAt)).toEqual([0, 500]);
    reads[1]!.finish();
    await expect(again).resolves.toBe('a read 1');
  });

  it('never makes a key wait for another key', async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    void paced('a');
    await jest.advanceTimersByTimeAsync(100);
    const other = paced('b');
    await settled();
    expect(reads.map((r) => [r.key, r.startedAt])).toEqual([
      ['a', 0],
      ['b', 100],
    ]);
    reads[1]!.finish();
    await expect(other).resolves.toBe('b read 1');
  });

  it("fails only a failed read's callers; the next caller gets a read of its own", async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    const failing = paced('a');
    await jest.advanceTimersByTimeAsync(10);
    reads[0]!.finish(new Error('statement timeout'));
    await expect(failing).rejects.toThrow('statement timeout');
    const next = paced('a');
    await jest.advanceTimersByTimeAsync(90);
    expect(reads.map((r) => r.startedAt)).toEqual([0, 100]);
    reads[1]!.finish();
    await expect(next).resolves.toBe('a read 1');
  });

  it('fails the callers of a read that throws before it returns a promise, and keeps reading the key', async () => {
    let calls = 0;
    const paced = pacedReads(
      (key) => {
        calls += 1;
        if (calls === 1) throw new Error('no connection');
        return Promise.resolve(`${key} read`);
      },
      ninefold,
      Date.now,
    );
    await expect(paced('a')).rejects.toThrow('no connection');
    const next = paced('a');
    await settled();
    await expect(next).resolves.toBe('a read');
  });

  it('reads at once again once a pause ended with nobody waiting', async () => {
    const { reads, read } = manualReads();
    const paced = pacedReads(read, ninefold, Date.now);
    const first = paced('a');
    await jest.advanceTimersByTimeAsync(20);
    reads[0]!.finish();
    await expect(first).resolves.toBe('a read 0');
    await jest.advanceTimersByTimeAsync(180);
    const later = paced('a');
    await settled();
    expect(reads.map((r) => r.startedAt)).toEqual([0, 200]);
    reads[1]!.finish();
    await expect(later).resolves.toBe('a read 1');
  });
});
