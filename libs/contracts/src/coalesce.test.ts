import { coalesceCalls } from './coalesce';

/** A runTogether whose runs the test finishes by hand, recording each run's key and caller count. */
function manualRuns() {
  const runs: Array<{ key: string; callers: number; args: Array<{ key: string; n?: number }>; finish: (err?: Error) => void }> = [];
  const runTogether = (calls: Array<{ key: string; n?: number }>) =>
    new Promise<string[]>((resolve, reject) => {
      const run = runs.length;
      const key = calls[0]!.key;
      runs.push({
        key,
        callers: calls.length,
        args: calls,
        finish: (err) => (err ? reject(err) : resolve(calls.map((_, i) => `${key} run ${run} answer ${i}`))),
      });
    });
  return { runs, runTogether };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceCalls', () => {
  it('runs a call alone and at once when no call of its key is running', async () => {
    const { runs, runTogether } = manualRuns();
    const call = coalesceCalls((a: { key: string; n?: number }) => a.key, runTogether, 8);
    const answer = call({ key: 'a' });
    expect(runs.map((r) => r.callers)).toEqual([1]);
    runs[0]?.finish();
    await expect(answer).resolves.toBe('a run 0 answer 0');
  });

  it('runs the calls that arrived during a run together next, with their arguments in arrival order, each answered with its own share', async () => {
    const { runs, runTogether } = manualRuns();
    const call = coalesceCalls((a: { key: string; n?: number }) => a.key, runTogether, 8);
    const first = call({ key: 'a', n: 0 });
    const later = [call({ key: 'a', n: 1 }), call({ key: 'a', n: 2 }), call({ key: 'a', n: 3 })];
    expect(runs).toHaveLength(1);
    runs[0]?.finish();
    await expect(first).resolves.toBe('a run 0 answer 0');
    await settled();
    expect(runs.map((r) => r.args.map((a) => a.n))).toEqual([[0], [1, 2, 3]]);
    runs[1]?.finish();
    await expect(Promise.all(later)).resolves.toEqual(['a run 1 answer 0', 'a run 1 answer 1', 'a run 1 answer 2']);
    // Idle again: the next call goes alone at once.
    const after = call({ key: 'a' });
    expect(runs.map((r) => r.callers)).toEqual([1, 3, 1]);
    runs[2]?.finish();
    await expect(after).resolves.toBe('a run 2 answer 0');
  });

  it('never makes a call wait for a running call of another key', async () => {
    const { runs, runTogether } = manualRuns();
    const call = coalesceCalls((a: { key: string; n?: number }) => a.key, runTogether, 8);
    void call({ key: 'a' });
    const other = call({ key: 'b' });
    expect(runs.map((r) => [r.key, r.callers])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    runs[1]?.finish();
    await expect(other).resolves.toBe('b run 1 answer 0');
  });

  it('runs at most maxTogether callers at once, the rest in the runs after, in arrival order', async () => {
    const { runs, runTogether } = manualRuns();
    const call = coalesceCalls((a: { key: string; n?: number }) => a.key, runTogether, 2);
    const answers = [call({ key: 'a' }), call({ key: 'a' }), call({ key: 'a' }), call({ key: 'a' })];
    for (let run = 0; run < 3; run += 1) {
      runs[run]?.finish();
      await settled();
    }
    expect(runs.map((r) => r.callers)).toEqual([1, 2, 1]);
    await expect(Promise.all(answers)).resolves.toEqual(['a run 0 answer 0', 'a run 1 answer 0', 'a run 1 answer 1', 'a run 2 answer 0']);
  });

  it('fails every caller of a failed run, and only them: the callers waiting behind it still run', async () => {
    const { runs, runTogether } = manualRuns();
    const call = coalesceCalls((a: { key: string; n?: number }) => a.key, runTogether, 8);
    const first = call({ key: 'a' });
    const second = [call({ key: 'a' }), call({ key: 'a' })];
    runs[0]?.finish();
    await first;
    const third = call({ key: 'a' });
    await settled();
    runs[1]?.finish(new Error('Postgres went away'));
    await expect(Promise.all(second.map((p) => p.catch((err: Error) => err.message)))).resolves.toEqual(['Postgres went away', 'Postgres went away']);
    await settled();
    runs[2]?.finish();
    await expect(third).resolves.toBe('a run 2 answer 0');
  });
});
