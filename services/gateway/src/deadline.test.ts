import { CommitTimeoutError, deadlineIn, earliest } from './deadline';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('deadlineIn', () => {
  it('passes on the outcome of work that finishes in time', async () => {
    const deadline = deadlineIn(1_000);
    await expect(deadline.race(Promise.resolve('done'), 'Kafka')).resolves.toBe('done');
    await expect(deadline.race(Promise.reject(new Error('refused')), 'Kafka')).rejects.toThrow('refused');
  });

  it('gives up at the deadline, naming what it waited for, and hands the late outcome to onAbandoned', async () => {
    const deadline = deadlineIn(1_000);
    let land: (value: string) => void = () => undefined;
    const late: Array<PromiseSettledResult<string>> = [];
    const raced = deadline.race(
      new Promise<string>((resolve) => (land = resolve)),
      () => 'the Kafka acknowledgement',
      (outcome) => late.push(outcome),
    );
    const failed = expect(raced).rejects.toThrow(new CommitTimeoutError(1_000, 'the Kafka acknowledgement'));
    await jest.advanceTimersByTimeAsync(1_000);
    await failed;
    land('offset 7');
    await jest.advanceTimersByTimeAsync(0);
    expect(late).toEqual([{ status: 'fulfilled', value: 'offset 7' }]);
  });

  it('keeps a late failure of abandoned work from becoming an unhandled rejection', async () => {
    const deadline = deadlineIn(10);
    let fail: (err: Error) => void = () => undefined;
    const raced = deadline.race(new Promise<never>((_resolve, reject) => (fail = reject)), 'Postgres');
    const failed = expect(raced).rejects.toBeInstanceOf(CommitTimeoutError);
    await jest.advanceTimersByTimeAsync(10);
    await failed;
    fail(new Error('connection terminated'));
    await jest.advanceTimersByTimeAsync(0);
  });

  it('refuses to start a step once the deadline passed', async () => {
    const deadline = deadlineIn(1_000);
    expect(() => deadline.check('the story lock')).not.toThrow();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(() => deadline.check('the story lock')).toThrow('the publish commit did not finish within 1000 ms (waiting for the story lock)');
  });
});

describe('earliest', () => {
  it('is the deadline that passes first, whatever the order', async () => {
    const first = deadlineIn(300);
    const second = deadlineIn(1_000);
    expect(earliest([second, first])).toBe(first);
    expect(first.remainingMs()).toBe(300);
    await jest.advanceTimersByTimeAsync(400);
    expect(first.remainingMs()).toBe(0);
    expect(second.remainingMs()).toBe(600);
  });
});
