import { settleWithin } from './settle-within';

describe('settleWithin', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('settles as the work does when it finishes in time', async () => {
    await expect(settleWithin(Promise.resolve('done'), 1000, () => new Error('late'))).resolves.toBe('done');
    await expect(settleWithin(Promise.reject(new Error('failed')), 1000, () => new Error('late'))).rejects.toThrow('failed');
  });

  it('rejects with the timeout at the bound and hands the late outcome to onLate', async () => {
    let finish: (value: string) => void = () => undefined;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const late: Array<PromiseSettledResult<string>> = [];
    const answer = settleWithin(
      work,
      1000,
      () => new Error('timed out'),
      (outcome) => late.push(outcome),
    );
    jest.advanceTimersByTime(1000);
    await expect(answer).rejects.toThrow('timed out');
    finish('done after all');
    await work;
    expect(late).toEqual([{ status: 'fulfilled', value: 'done after all' }]);
  });
});
