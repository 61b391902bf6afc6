/**
 * Equal calls that arrive while one is running wait for it and then run together, as one call
 * answering each of them (the group commit's pattern, for reads that lease: receives of one consumer
 * with the same options). A call arriving when no equal call runs goes at once, alone, so an idle
 * process adds no wait. `runTogether(args, callers)` resolves with one answer per caller, in order;
 * its failure is every waiting caller's failure.
 */
export function coalesceEqualCalls<A, R>(
  keyOf: (args: A) => string,
  runTogether: (args: A, callers: number) => Promise<R[]>,
  maxTogether: number,
): (args: A) => Promise<R> {
  interface Waiting {
    resolve: (answer: R) => void;
    reject: (err: unknown) => void;
  }
  // Per key, the callers waiting for the running call; a key is here only while a call of it runs.
  const waitingByKey = new Map<string, Waiting[]>();

  // A loop, not a chain of calls: under steady load a key may never fall idle.
  const drain = async (key: string, args: A, first: Waiting[]): Promise<void> => {
    for (let callers = first; callers.length > 0; callers = (waitingByKey.get(key) ?? []).splice(0, maxTogether)) {
      try {
        const answers = await runTogether(args, callers.length);
        callers.forEach((c, i) => c.resolve(answers[i] as R));
      } catch (err) {
        for (const c of callers) c.reject(err);
      }
    }
    waitingByKey.delete(key);
  };

  return (args) =>
    new Promise<R>((resolve, reject) => {
      const key = keyOf(args);
      const waiting = waitingByKey.get(key);
      if (waiting) {
        waiting.push({ resolve, reject });
        return;
      }
      waitingByKey.set(key, []);
      void drain(key, args, [{ resolve, reject }]);
    });
}
