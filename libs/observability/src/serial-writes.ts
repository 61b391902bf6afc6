/**
 * Background writes of counted or queued data, one at a time: a write asked for while one runs waits
 * for it and then runs, so it carries what accumulated meanwhile. A failed write (its writer logs and
 * counts it) does not stop the ones after it.
 */
export class SerialWrites {
  private running: Promise<void> | null = null;

  /** Whether a write is running or waiting. */
  get busy(): boolean {
    return this.running !== null;
  }

  run(write: () => Promise<void>): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const next: Promise<void> = previous
      .catch(() => undefined)
      .then(write)
      .finally(() => {
        if (this.running === next) this.running = null;
      });
    this.running = next;
    return next;
  }
}
