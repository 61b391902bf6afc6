import { HttpError } from '@bus/http';

/**
 * A refusal of the SQS door: `code` is the SQS error code an SDK reads (AWS JSON's `__type`, the query
 * protocol's `<Code>`); the rule `sqs.<code>` names it in logs and metrics.
 */
export class SqsError extends HttpError {
  override readonly name = 'SqsError';
  constructor(
    status: 400 | 401 | 403,
    readonly code: string,
    message: string,
  ) {
    super(status, `sqs.${code}`, message);
  }
}

export const invalid = (message: string) => new SqsError(400, 'InvalidParameterValue', message);
export const missing = (name: string) => new SqsError(400, 'MissingParameter', `The request must contain the parameter ${name}`);

/** The SQS code of any error answered on the door's path: the door's own, else the nearest SQS code (so an SDK always reads one). */
export function sqsCodeOf(err: HttpError): string {
  if (err instanceof SqsError) return err.code;
  if (err.status === 429) return 'RequestThrottled';
  if (err.status === 503) return 'ServiceUnavailable';
  if (err.status === 405) return 'UnsupportedOperation';
  if (err.status === 401 || err.status === 403) return 'AccessDenied';
  if (err.status >= 500) return 'InternalFailure';
  return 'InvalidParameterValue';
}
