import { pacedReads, type QueueStats } from '@bus/contracts';

/** After each read of a consumer's counts, the next waits this many times the read's time … */
const PAUSE_FACTOR = 9;
/** … but never longer than this, so a slow read (a statement near its timeout) keeps callers waiting at most 2 s more. */
const PAUSE_MAX_MS = 2_000;

/**
 * One consumer's queue counts, paced per consumer (libs/contracts pacedReads): the counts read every
 * un-acked row (131 ms at 1,000,000), so without pacing a client asking in a loop would take Postgres
 * from every other consumer. With it, asking in a loop takes at most a tenth of one connection per
 * service that answers counts, whatever the depth, and each answer still counts what was there when it was asked
 * (docs/delivery.md, "Queue counts"). Every route that answers a consumer's counts reads them so.
 */
export function pacedQueueCounts(read: (consumerId: string) => Promise<QueueStats | undefined>): (consumerId: string) => Promise<QueueStats | undefined> {
  return pacedReads(read, (ms) => Math.min(PAUSE_FACTOR * ms, PAUSE_MAX_MS));
}
