import type { QueueOperations, ReplayRequest } from '@bus/contracts';
import type { Logger } from '@bus/observability';
import type { AdminStore, ReplayView } from './admin-store';

export interface ReplayRunner {
  /** Records the job and starts it in the background; the answer is the job as it starts. */
  start(req: ReplayRequest): Promise<ReplayView>;
  /** Waits for the jobs of this process (for tests and shutdown). */
  idle(): Promise<void>;
}

/** How often a running job marks itself alive; well inside REPLAY_STALE_MS. */
const HEARTBEAT_MS = 10_000;

/**
 * Runs replays in the portal process. A replay reads the archive from Kafka, which can take a while
 * for a 30-day archive, so the request answers 202 with the job and GET /api/admin/replays/{id}
 * follows it. Replays are idempotent (invariant D: a live delivery is left alone), so a job cut short
 * by a restart (it then reads as interrupted) is simply asked for again.
 */
export function createReplayRunner(deps: { store: AdminStore; replay: QueueOperations['replay']; logger: Logger }): ReplayRunner {
  const running = new Set<Promise<void>>();
  return {
    start: async (req) => {
      const job = await deps.store.createReplay(req.consumerId, req.since);
      const heartbeat = setInterval(() => {
        deps.store.heartbeatReplay(job.replay_id).catch((err: unknown) => deps.logger.warn({ err, replay_id: job.replay_id }, 'replay heartbeat failed'));
      }, HEARTBEAT_MS);
      heartbeat.unref();
      const work = deps
        .replay(req)
        .then(
          (counts) => deps.store.finishReplay(job.replay_id, { status: 'succeeded', ...counts }),
          (err: unknown) => {
            deps.logger.error({ err, replay_id: job.replay_id }, 'replay failed');
            return deps.store.finishReplay(job.replay_id, { status: 'failed', error: 'the archive could not be read; see the portal log for this replay id' });
          },
        )
        .catch((err: unknown) => deps.logger.error({ err, replay_id: job.replay_id }, 'replay outcome not recorded'))
        .finally(() => {
          clearInterval(heartbeat);
          running.delete(work);
        });
      running.add(work);
      return job;
    },
    idle: async () => {
      await Promise.all([...running]);
    },
  };
}
