import { HttpError } from '@bus/http';

/** 403 consumer.mismatch: the path's {c} is not the token's own consumer connection. */
export class ConsumerMismatchError extends HttpError {
  override readonly name = 'ConsumerMismatchError';
  constructor() {
    super(403, 'consumer.mismatch', "The consumer in the path is not the token's own connection");
  }
}

/** 400 request.invalid: a query parameter or body of a consumer route is malformed. */
export class PullRequestInvalidError extends HttpError {
  override readonly name = 'PullRequestInvalidError';
  constructor(message: string) {
    super(400, 'request.invalid', message, 'conformance');
  }
}

export { QueueUnavailableError } from '@bus/queue';
