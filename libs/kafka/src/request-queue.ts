/**
 * kafkajs 2.2.4, its last release, keeps every broker connection polling once a millisecond for as
 * long as the connection is open. `RequestQueue.scheduleCheckPendingRequests` schedules its next check
 * even when no request is pending and no throttle is in force, with the delay
 * `throttledUntil - Date.now()`: negative, since `throttledUntil` is -1 when unthrottled. Node clamps
 * that to 1 ms, so the check runs, schedules itself again, and so on (kafkajs issues 1556, 1704;
 * since Node 24 it also warns, TimeoutNegativeWarning, issue 1751). An idle bus process woke ~900
 * times a second for it (docs/benchmarks.md, "kafkajs' idle poll").
 *
 * The check exists for two cases only, and both still get it: a request waiting for a throttle to end
 * (checked when it ends), and a request waiting for room under the in-flight limit (checked every
 * 10 ms as before; the answer that frees the room checks too). With nothing pending and no throttle,
 * nothing is scheduled: the next request either goes at once or is queued, and queueing schedules the
 * check.
 */

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs' own interval for a queue held by its in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

// kafkajs exports no way to configure or replace its request queue; every connection creates one
// from this module, so its prototype is where the check is scheduled for all of them.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueueClass = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueue };

function scheduleCheckPendingRequests(this: RequestQueue): void {
  if (this.throttleCheckTimeoutId) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  if (this.pending.length === 0 && untilUnthrottled <= 0) return;
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
  );
}

/** Applied once, when @bus/kafka is loaded: every client the bus makes is made through it. */
RequestQueueClass.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
