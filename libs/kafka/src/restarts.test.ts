import type { Consumer, ConsumerRunConfig } from 'kafkajs';
import { runRestartingAfterCrashes } from './restarts';

const RESTART_AFTER_MS = 1_000;

/** The part of a kafkajs consumer runRestartingAfterCrashes uses: its events, connect, run and disconnect. */
function fakeConsumer() {
  const listeners = new Map<string, Array<(event: unknown) => void>>();
  const calls: string[] = [];
  let failConnects = 0;
  const consumer = {
    events: { CRASH: 'consumer.crash', FETCH: 'consumer.fetch' },
    on: (name: string, listener: (event: unknown) => void) => {
      listeners.set(name, [...(listeners.get(name) ?? []), listener]);
      return () => undefined;
    },
    connect: async () => {
      calls.push('connect');
      if (failConnects > 0) {
        failConnects -= 1;
        throw new Error('connect ECONNREFUSED');
      }
    },
    run: async (config: ConsumerRunConfig) => {
      calls.push(`run ${config === runConfig ? 'with the same config' : 'with another config'}`);
    },
    disconnect: async () => {
      calls.push('disconnect');
    },
  };
  const emit = (name: string, payload: unknown) => listeners.get(name)?.forEach((listener) => listener({ payload }));
  return {
    consumer: consumer as unknown as Consumer,
    calls,
    crash: (restart: boolean) => emit('consumer.crash', { error: new Error('There is no broker available'), groupId: 'g', restart }),
    fetch: () => emit('consumer.fetch', {}),
    failNextConnects: (n: number) => (failConnects = n),
  };
}

const runConfig: ConsumerRunConfig = { eachBatch: async () => undefined };

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  jest.useRealTimers();
});

describe('runRestartingAfterCrashes', () => {
  it('runs the consumer once to start with', async () => {
    const { consumer, calls } = fakeConsumer();
    await runRestartingAfterCrashes(consumer, runConfig, { restartAfterMs: RESTART_AFTER_MS });
    expect(calls).toEqual(['run with the same config']);
  });

  it('leaves a crash kafkajs restarts from to kafkajs', async () => {
    const { consumer, calls, crash } = fakeConsumer();
    await runRestartingAfterCrashes(consumer, runConfig, { restartAfterMs: RESTART_AFTER_MS });
    crash(true);
    await jest.advanceTimersByTimeAsync(10 * RESTART_AFTER_MS);
    expect(calls).toEqual(['run with the same config']);
  });

  it('connects and runs the consumer again, with the same config, a wait after a crash kafkajs does not restart from', async () => {
    const { consumer, calls, crash } = fakeConsumer();
    await runRestartingAfterCrashes(consumer, runConfig, { restartAfterMs: RESTART_AFTER_MS });
    crash(false);
    await jest.advanceTimersByTimeAsync(RESTART_AFTER_MS - 1);
    expect(calls).toEqual(['run with the same config']);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(['run with the same config', 'connect', 'run with the same config']);
  });

  it('tries a failed start again after twice the wait, and waits the first wait again once the consumer fetched', async () => {
    const { consumer, calls, crash, fetch, failNextConnects } = fakeConsumer();
    await runRestartingAfterCrashes(consumer, runConfig, { restartAfterMs: RESTART_AFTER_MS });
    failNextConnects(1);
    crash(false);
    await jest.advanceTimersByTimeAsync(RESTART_AFTER_MS);
    expect(calls).toEqual(['run with the same config', 'connect']);
    await jest.advanceTimersByTimeAsync(2 * RESTART_AFTER_MS - 1);
    expect(calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(['run with the same config', 'connect', 'connect', 'run with the same config']);
    fetch();
    crash(false);
    await jest.advanceTimersByTimeAsync(RESTART_AFTER_MS);
    expect(calls.slice(4)).toEqual(['connect', 'run with the same config']);
  });

  it('starts nothing again once stopped, and disconnects the consumer', async () => {
    const { consumer, calls, crash } = fakeConsumer();
    const run = await runRestartingAfterCrashes(consumer, runConfig, { restartAfterMs: RESTART_AFTER_MS });
    crash(false);
    await run.stop();
    await jest.advanceTimersByTimeAsync(10 * RESTART_AFTER_MS);
    crash(false);
    await jest.advanceTimersByTimeAsync(10 * RESTART_AFTER_MS);
    expect(calls).toEqual(['run with the same config', 'disconnect']);
  });
});
