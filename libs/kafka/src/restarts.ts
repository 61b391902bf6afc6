import type { Consumer, ConsumerRunConfig } from 'kafkajs';
import type { Logger } from 'pino';

export interface RestartOptions {
  /**
   * How long after a crash kafkajs does not recover from the consumer is started again; each failed
   * start doubles the wait, up to RESTART_AT_MOST_AFTER_MS, until the consumer fetches again.
   */
  restartAfterMs?: number;
  /** Hears of those crashes and restarts (kafkajs logs the crash itself too, through createKafka's logger). */
  logger?: Logger;
}

/** A consumer run by runBatches or runRecordBatches. */
export interface ConsumerRun {
  /** Stops starting it again and disconnects it: call it instead of consumer.disconnect(). */
  stop(): Promise<void>;
}

const RESTART_AFTER_MS = 2_000;
const RESTART_AT_MOST_AFTER_MS = 30_000;

/**
 * Runs `consumer` and starts it again after every crash kafkajs leaves it stopped by. kafkajs
 * restarts a crashed consumer only when the crash's cause is retriable; a non-retriable one — no
 * broker or group coordinator to ask while a broker restarts (kafkajs issues 1445, 1513), or a
 * handler's KafkaJSNonRetriableError — leaves it disconnected for good, and a service reading through
 * it reads nothing more until its process restarts. A restart rejoins the group and reads from the
 * last committed offsets, so what was handled but not committed is handed over again.
 */
export async function runRestartingAfterCrashes(consumer: Consumer, config: ConsumerRunConfig, opts: RestartOptions = {}): Promise<ConsumerRun> {
  const firstWaitMs = opts.restartAfterMs ?? RESTART_AFTER_MS;
  let stopped = false;
  let failedStarts = 0;
  let timer: NodeJS.Timeout | undefined;

  const startAgain = async (): Promise<void> => {
    timer = undefined;
    if (stopped) return;
    try {
      await consumer.connect();
      await consumer.run(config);
      if (stopped) await consumer.disconnect();
    } catch (err) {
      opts.logger?.error({ err }, 'kafka consumer could not be started again; trying again');
      scheduleStart();
    }
  };
  const scheduleStart = () => {
    if (stopped || timer !== undefined) return;
    const waitMs = Math.min(firstWaitMs * 2 ** failedStarts, RESTART_AT_MOST_AFTER_MS);
    failedStarts += 1;
    timer = setTimeout(() => void startAgain(), waitMs);
  };

  consumer.on(consumer.events.CRASH, ({ payload }) => {
    // kafkajs starts it again itself.
    if (payload.restart || stopped) return;
    opts.logger?.error({ err: payload.error, groupId: payload.groupId }, 'kafka consumer crashed and kafkajs will not start it again; starting it again');
    scheduleStart();
  });
  // Reading again: the next crash waits the first wait again.
  consumer.on(consumer.events.FETCH, () => {
    failedStarts = 0;
  });
  await consumer.run(config);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await consumer.disconnect();
    },
  };
}
