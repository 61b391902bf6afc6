export interface EventuallyOptions {
  /** Gives up after this long (default 20 s); the error names `what` and the last value or error seen. */
  timeoutMs?: number;
  /** Pause between reads (default 50 ms). It paces the reads; the test never relies on it for order. */
  intervalMs?: number;
  /** Says what is awaited, for the error when it never comes. */
  what?: string;
  /** Checked before each read: throw to stop waiting at once (e.g. the process under test exited). */
  abortIf?: () => void;
}

/**
 * The one way tests wait: reads `read()` until `done(value)` holds, then returns that value. A read
 * that throws is retried like a value that is not done yet (a server still starting refuses
 * connections); the last value or error is in the timeout's message, so a failure says what it saw.
 */
export async function eventually<T>(read: () => Promise<T> | T, done: (value: T) => boolean, opts: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let last: string;
  for (;;) {
    opts.abortIf?.();
    try {
      const value = await read();
      if (done(value)) return value;
      last = `last value: ${describe(value)}`;
    } catch (err) {
      last = `last error: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) throw new Error(`${opts.what ?? 'condition'} not reached in ${opts.timeoutMs ?? 20_000} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 50));
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}
