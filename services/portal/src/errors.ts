import { DependencyUnavailableError, HttpError } from '@bus/http';
import type { ValidationAnswer } from '@bus/skills';

/**
 * The admin API's refusals (docs/admin.md), rendered by libs/http as `{ code, message, request_id }`.
 * The operator's credentials are the only way in: bus tokens are never accepted here.
 */
export class OperatorUnauthorizedError extends HttpError {
  override readonly name = 'OperatorUnauthorizedError';
  constructor() {
    super(401, 'admin.unauthorized', 'The admin API needs the operator credentials (HTTP Basic: operator client id and secret)', 'policy', {
      'WWW-Authenticate': 'Basic realm="message-bus admin", charset="UTF-8"',
    });
  }
}

export class AdminNotFoundError extends HttpError {
  override readonly name = 'AdminNotFoundError';
  constructor(what: string, id: string) {
    super(404, 'admin.not_found', `No ${what} ${JSON.stringify(id.slice(0, 80))}`);
  }
}

export class AdminRequestInvalidError extends HttpError {
  override readonly name = 'AdminRequestInvalidError';
  constructor(reason: string) {
    super(400, 'admin.request_invalid', reason);
  }
}

/** The request is well-formed but the resource's state refuses it (e.g. rotating a revoked connection). */
export class AdminConflictError extends HttpError {
  override readonly name: string = 'AdminConflictError';
  constructor(reason: string) {
    super(409, 'admin.conflict', reason);
  }
}

/**
 * 412 admin.precondition_failed: a change sent with a condition the admin API cannot meet. It keeps no
 * entity tags, so an If-Match naming one never holds, and If-None-Match: * on a PUT asks for a resource
 * that does not exist yet; performing the change anyway would let a script believe it had guarded it.
 */
export class AdminPreconditionFailedError extends HttpError {
  override readonly name = 'AdminPreconditionFailedError';
  constructor(reason: string) {
    super(412, 'admin.precondition_failed', reason);
  }
}

/** A registration the catalogue rules refuse: the body carries the catalogue's own validation answer. */
export class RegistrationInvalidError extends HttpError {
  override readonly name = 'RegistrationInvalidError';
  constructor(private readonly answer: ValidationAnswer) {
    super(422, 'registration.invalid', 'The skill instances do not pass the catalogue checks; nothing was registered (see answer)');
  }

  override details(): Record<string, unknown> {
    return { answer: this.answer };
  }
}

/** 503 admin.unavailable: Postgres or Kafka failed while the route read or changed the registry; retry. */
export class AdminUnavailableError extends DependencyUnavailableError {
  override readonly name = 'AdminUnavailableError';
  constructor(cause: unknown) {
    super(
      'admin.unavailable',
      'The registry (Postgres) or the control topic (Kafka) could not be reached; nothing was changed unless the answer says so. Retry shortly',
      cause,
    );
  }
}

/** 503 admin.unavailable: the portal could not reach the bus to publish as a producer (its cause is logged); retry. */
export class PortalBusUnavailableError extends DependencyUnavailableError {
  override readonly name = 'PortalBusUnavailableError';
  constructor(cause: unknown) {
    super('admin.unavailable', 'The bus could not be reached from the portal (PORTAL_BUS_URL); nothing was sent. Retry shortly', cause);
  }
}
