/**
 * Reads of one key, paced: at most one runs at a time, and the next starts `pauseAfter(ms)` after the
 * previous one of its key ended, `ms` being how long that one took. Callers that arrive before a read
 * starts share it; a caller never gets the answer of a read that started before it called, so answers
 * stay as fresh as a read of its own — pacing costs a caller waiting, never staleness. A key's state
 * lives only while a read runs, callers wait or its pause lasts, so memory is bounded by the keys read
 * lately. For reads whose cost grows with the data (a queue's counts): a client asking in a loop then
 * takes at most ms / (ms + pause) of one connection, whatever the data's size.
 */
export function pacedReads<R>(
  read: (key: string) => Promise<R>,
  pauseAfter: (ms: number) => number,
  now: () => number = () => performance.now(),
): (key: string) => Promise<R> {
  interface Waiting {
    resolve: (answer: R) => void;
    reject: (err: unknown) => void;
  }
  interface KeyState {
    waiting: Waiting[];
    running: boolean;
    /** Set while the key pauses (after a read, before the next may start). */
    pause: NodeJS.Timeout | undefined;
  }
  const states = new Map<string, KeyState>();

  const start = (key: string, state: KeyState): void => {
    const callers = state.waiting.splice(0);
    state.running = true;
    const startedAt = now();
    // Through a promise, so a read that throws at once fails its callers instead of stalling the key.
    Promise.resolve()
      .then(() => read(key))
      .then(
        (answer) => settle(key, state, startedAt, () => callers.forEach((c) => c.resolve(answer))),
        (err: unknown) => settle(key, state, startedAt, () => callers.forEach((c) => c.reject(err))),
      );
  };

  const settle = (key: string, state: KeyState, startedAt: number, answer: () => void): void => {
    state.running = false;
    const pause = Math.max(0, pauseAfter(now() - startedAt));
    // Unref'd: a pause with nobody waiting must not keep a process alive.
    state.pause = setTimeout(() => {
      state.pause = undefined;
      if (state.waiting.length > 0) start(key, state);
      else states.delete(key);
    }, pause).unref();
    answer();
  };

  return (key) =>
    new Promise<R>((resolve, reject) => {
      let state = states.get(key);
      if (!state) {
        state = { waiting: [], running: false, pause: undefined };
        states.set(key, state);
      }
      state.waiting.push({ resolve, reject });
      // A running read or a pause starts the next read when it ends.
      if (!state.running && state.pause === undefined) start(key, state);
    });
}
