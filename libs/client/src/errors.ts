/** A violation as the bus reports it (docs/api.md#publish-responses): `rule` is stable, `message` is for people. */
export interface Violation {
  source: 'schema' | 'conformance' | 'sequence' | 'policy';
  rule: string;
  message: string;
  /** JSON Pointer into the submitted message, where known. */
  path?: string;
}

/**
 * The bus answered with a refusal (a bus-shaped body: accepted false and its violations): a 4xx, or a
 * 429/503 still answered after the client's retries ran out. `rule` is the first violation's.
 */
export class BusRefusedError extends Error {
  override readonly name: string = 'BusRefusedError';
  readonly rule: string;
  constructor(
    readonly status: number,
    readonly violations: readonly Violation[],
    /** How many requests were made, the retries included. */
    readonly attempts = 1,
  ) {
    const first = violations[0];
    super(`${status} ${first ? `${first.rule}: ${first.message}` : 'refused'}${violations.length > 1 ? ` (and ${violations.length - 1} more)` : ''}`);
    this.rule = first?.rule ?? 'unknown';
  }
}

/** The token route refused the credentials or could not issue a token (RFC 6749 §5.2 body). */
export class TokenRequestError extends Error {
  override readonly name = 'TokenRequestError';
  constructor(
    readonly status: number,
    /** invalid_client, invalid_request, temporarily_unavailable, …; rate.limited for a 429. */
    readonly error: string,
    description: string,
  ) {
    super(`token route answered ${status} ${error}: ${description}`);
  }
}

/**
 * The bus could not be reached, or answered with something that is not the bus's (a proxy's page, a
 * 5xx without a bus body), and the retries ran out. `cause` is the last failure.
 */
export class BusUnreachableError extends Error {
  override readonly name = 'BusUnreachableError';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
