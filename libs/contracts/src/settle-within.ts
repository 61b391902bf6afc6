/**
 * Settles as `work` does, or rejects with `timedOut()` once `ms` have passed: an answer that never
 * waits past its bound on a dependency that hangs. The work is not cancelled; its outcome, when it
 * comes after the bound, goes to `onLate` (never an unhandled rejection).
 */
export function settleWithin<T>(work: Promise<T>, ms: number, timedOut: () => unknown, onLate?: (outcome: PromiseSettledResult<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timedOut());
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (late) onLate?.({ status: 'fulfilled', value });
        else resolve(value);
      },
      (reason: unknown) => {
        clearTimeout(timer);
        if (late) onLate?.({ status: 'rejected', reason });
        else reject(reason);
      },
    );
  });
}
