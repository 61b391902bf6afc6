import { DependencyUnavailableError, HttpError } from '@bus/http';

/** 403 consumer.mismatch: the path's {c} is not the token's own consumer connection. */
export class ConsumerMismatchError extends HttpError {
  override readonly name = 'ConsumerMismatchError';
  constructor() {
    super(403, 'consumer.mismatch', "The consumer in the path is not the token's own connection");
  }
}

/**
 * 503 queue.unavailable: Postgres failed while a consumer route read or changed the queue (or the
 * skill registrations). `cause` is Postgres's own error, which the error middleware logs.
 */
export class QueueUnavailableError extends DependencyUnavailableError {
  override readonly name = 'QueueUnavailableError';
  constructor(cause: unknown) {
    super('queue.unavailable', 'The queue could not be read or changed; retry the request', cause);
  }
}
