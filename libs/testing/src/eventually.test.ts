import { eventually, msUntil } from './eventually';

describe('eventually', () => {
  it('returns the first value that is done, reading again until then', async () => {
    let reads = 0;
    const value = await eventually(
      () => ++reads,
      (n) => n === 3,
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
    expect(reads).toBe(3);
  });

  it('retries a read that throws, as a value that is not done yet', async () => {
    let reads = 0;
    const value = await eventually(
      () => {
        reads += 1;
        if (reads < 2) throw new Error('connection refused');
        return 'up';
      },
      (v) => v === 'up',
      { intervalMs: 1 },
    );
    expect(value).toBe('up');
  });

  it('ends at once on a read that throws when retryReadErrors is false', async () => {
    let reads = 0;
    const failing = () => {
      reads += 1;
      throw new Error('answer does not match its OpenAPI document');
    };
    await expect(eventually(failing, () => true, { intervalMs: 1, retryReadErrors: false })).rejects.toThrow('answer does not match its OpenAPI document');
    expect(reads).toBe(1);
  });

  it('times out naming what it waited for and the last thing it saw', async () => {
    await expect(
      eventually(
        () => ({ state: 'pending' }),
        () => false,
        { timeoutMs: 20, intervalMs: 5, what: 'the lease' },
      ),
    ).rejects.toThrow(/the lease not reached in 20 ms \(last value: \{"state":"pending"\}\)/);
  });

  it('stops at once when abortIf throws', async () => {
    let reads = 0;
    const started = Date.now();
    await expect(
      eventually(
        () => ++reads,
        () => false,
        {
          timeoutMs: 10_000,
          intervalMs: 1,
          abortIf: () => {
            if (reads >= 2) throw new Error('process exited');
          },
        },
      ),
    ).rejects.toThrow('process exited');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('msUntil', () => {
  it('answers how long the check took to hold', async () => {
    const holdsFrom = Date.now() + 60;
    const ms = await msUntil(() => Date.now() >= holdsFrom, { intervalMs: 5 });
    expect(ms).toBeGreaterThanOrEqual(55);
    expect(ms).toBeLessThan(5_000);
  });

  it('fails like eventually when the check never holds', async () => {
    await expect(msUntil(() => false, { timeoutMs: 20, intervalMs: 5, what: 'the revocation' })).rejects.toThrow(/the revocation not reached in 20 ms/);
  });
});
