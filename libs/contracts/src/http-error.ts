import type { Violation, ViolationSource } from './violation';

/**
 * The base of the one error set of the HTTP edge (libs/http errors.ts has the shared subclasses; a rule's
 * owner defines its own next to the rule). Here, below every lib that throws one, so that a lib need not
 * depend on the express edge to refuse a request; the error middleware of libs/http renders them.
 */
export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  constructor(
    readonly status: number,
    readonly rule: string,
    message: string,
    readonly source: ViolationSource = 'policy',
    /** Extra response headers, e.g. Retry-After on a 429. */
    readonly headers: Readonly<Record<string, string>> = {},
    /** `cause`: the error behind this one, for the log (never rendered into the answer). */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** The violations of a bus-shaped body; subclasses that carry several override this. */
  violations(): Violation[] {
    return [{ source: this.source, rule: this.rule, message: this.message }];
  }

  /** Violations found but not carried (beyond what a validator turns into Violations); answers count them. */
  omittedViolations(): number {
    return 0;
  }

  /** Fields a portal-shaped body carries next to code and message; a subclass with more to say overrides this. */
  details(): Record<string, unknown> {
    return {};
  }
}
