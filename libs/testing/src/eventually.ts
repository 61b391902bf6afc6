export interface EventuallyOptions {
  /** Gives up after this long (default 20 s); the error names `what` and the last value or error seen. */
  timeoutMs?: number;
  /** Pause between reads (default 50 ms). It paces the reads; the test never relies on it for order. */
  intervalMs?: number;
  /** Says what is awaited, for the error when it never comes. */
  what?: string;
  /** Checked before each read: throw to stop waiting at once (e.g. the process under test exited). */
  abortIf?: () => void;
  /**
   * Whether a read that throws is read again (default true: a server still starting refuses
   * connections). False for a read that asserts on what it got (an OpenAPI check of each answer): its
   * failure ends the wait at once, where a retry would hide it behind the next answer.
   */
  retryReadErrors?: boolean;
}

/**
 * The one way tests wait: reads `read()` until `done(value)` holds, then returns that value. A read
 * that throws is retried like a value that is not done yet (a server still starting refuses
 * connections) unless `retryReadErrors` is false; the last value or error is in the timeout's message,
 * so a failure says what it saw.
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
      if (opts.retryReadErrors === false) throw err;
      last = `last error: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() >= deadline) throw new Error(`${opts.what ?? 'condition'} not reached in ${opts.timeoutMs ?? 20_000} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 50));
  }
}

/**
 * How long `check` took to hold, waiting for it as `eventually` does: for tests that measure a time
 * (a revocation reaching every service) and not only wait for it. Fails like `eventually` past the timeout.
 */
export async function msUntil(check: () => Promise<boolean> | boolean, opts: EventuallyOptions = {}): Promise<number> {
  const started = Date.now();
  await eventually(check, (held) => held, opts);
  return Date.now() - started;
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}
