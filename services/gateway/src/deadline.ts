import { settleWithin } from '@bus/contracts';

/** The commit of a publish took longer than its budget (PUBLISH_COMMIT_TIMEOUT, counted from the publish's arrival). */
export class CommitTimeoutError extends Error {
  override readonly name = 'CommitTimeoutError';
  constructor(timeoutMs: number, waitingFor: string) {
    super(`the publish commit did not finish within ${timeoutMs} ms (waiting for ${waitingFor})`);
  }
}

/** A point in time a piece of work must finish by. */
export interface Deadline {
  /** When it passes, in Date.now() milliseconds. */
  readonly at: number;
  /** Milliseconds left until it passes (0 once it has). */
  remainingMs(): number;
  /** Throws CommitTimeoutError once the deadline has passed: a step that must not start late. */
  check(waitingFor: string): void;
  /**
   * Settles as `work` does, or rejects with CommitTimeoutError at the deadline; `work` is then
   * abandoned and its outcome, when it comes, goes to `onAbandoned` (never an unhandled rejection).
   */
  race<T>(work: Promise<T>, waitingFor: string | (() => string), onAbandoned?: (outcome: PromiseSettledResult<T>) => void): Promise<T>;
}

/** A deadline `timeoutMs` from now; its CommitTimeoutError names that budget. */
export function deadlineIn(timeoutMs: number): Deadline {
  const at = Date.now() + timeoutMs;
  const remainingMs = () => Math.max(0, at - Date.now());
  return {
    at,
    remainingMs,
    check: (waitingFor) => {
      if (remainingMs() === 0) throw new CommitTimeoutError(timeoutMs, waitingFor);
    },
    race: (work, waitingFor, onAbandoned) =>
      settleWithin(work, remainingMs(), () => new CommitTimeoutError(timeoutMs, typeof waitingFor === 'string' ? waitingFor : waitingFor()), onAbandoned),
  };
}

/** The earliest of `deadlines` (at least one): work serving them all must finish by it. */
export function earliest(deadlines: readonly Deadline[]): Deadline {
  return deadlines.reduce((first, d) => (d.at < first.at ? d : first));
}
