import { DependencyUnavailableError } from '@bus/http';

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
