/**
 * Calls of one key that arrive while one of that key runs wait for it and then run together, as one
 * call answering each of them (the group commit's pattern: receives of one consumer with the same
 * options, acks of one consumer). A call arriving when none of its key runs goes at once, alone, so an
 * idle process adds no wait. `runTogether(calls)` gets the waiting callers' arguments in arrival order
 * and resolves with one answer per caller, in that order; its failure is each of those callers' failure.
 */
export function coalesceCalls<A, R>(keyOf: (args: A) => string, runTogether: (calls: A[]) => Promise<R[]>, maxTogether: number): (args: A) => Promise<R> {
  interface Waiting {
    args: A;
    resolve: (answer: R) => void;
    reject: (err: unknown) => void;
  }
  // Per key, the callers waiting for the running call; a key is here only while a call of it runs.
  const waitingByKey = new Map<string, Waiting[]>();

  // A loop, not a chain of calls: under steady load a key may never fall idle.
  const drain = async (key: string, first: Waiting[]): Promise<void> => {
    for (let callers = first; callers.length > 0; callers = (waitingByKey.get(key) ?? []).splice(0, maxTogether)) {
      try {
        const answers = await runTogether(callers.map((c) => c.args));
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
        waiting.push({ args, resolve, reject });
        return;
      }
      waitingByKey.set(key, []);
      void drain(key, [{ args, resolve, reject }]);
    });
}
