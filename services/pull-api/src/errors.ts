import { HttpError } from '@bus/http';

/** 403 consumer.mismatch: the path's {c} is not the token's own consumer connection. */
export class ConsumerMismatchError extends HttpError {
  override readonly name = 'ConsumerMismatchError';
  constructor() {
    super(403, 'consumer.mismatch', "The consumer in the path is not the token's own connection");
  }
}

export { QueueUnavailableError } from '@bus/queue';
