import { DependencyUnavailableError, HttpError } from '@bus/http';

/** 401: the portal's /api/* routes need a signed-in person (the session cookie). */
export class SignInRequiredError extends HttpError {
  override readonly name = 'SignInRequiredError';
  constructor() {
    super(401, 'portal.sign_in_required', 'Sign in to the portal first (GET /portal/login); the session may have ended');
  }
}

/** 403: the person's roles do not allow this action on this organisation (policy.ts). */
export class PortalForbiddenError extends HttpError {
  override readonly name = 'PortalForbiddenError';
  constructor(action: string) {
    super(403, 'portal.forbidden', `Your roles do not allow ${action} here`);
  }
}

/** 403: a state-changing request without the session's CSRF token. */
export class CsrfRefusedError extends HttpError {
  override readonly name = 'CsrfRefusedError';
  constructor() {
    super(403, 'portal.csrf', "The request did not carry this session's CSRF token (X-CSRF-Token); reload the page and try again");
  }
}

/** 400: the provider's answer could not complete a sign-in (expired or replayed state, refused code, no roles). */
export class SignInFailedError extends HttpError {
  override readonly name = 'SignInFailedError';
  constructor(reason: string, cause?: unknown) {
    super(400, 'portal.sign_in_failed', `Sign-in failed: ${reason}. Start again at /portal/login`, 'policy', {}, cause === undefined ? undefined : { cause });
  }
}

/** 404: sign-in for people is not configured on this deployment (PORTAL_OIDC_ISSUER unset). */
export class SignInNotConfiguredError extends HttpError {
  override readonly name = 'SignInNotConfiguredError';
  constructor() {
    super(
      404,
      'portal.sign_in_not_configured',
      'Sign-in for people is not configured on this deployment (PORTAL_OIDC_ISSUER); the admin API works with the operator credentials',
    );
  }
}

/** 503: the identity provider or Postgres did not answer; nothing was changed unless the answer says so. */
export class PortalUnavailableError extends DependencyUnavailableError {
  override readonly name = 'PortalUnavailableError';
  constructor(cause: unknown) {
    super('portal.unavailable', 'The identity provider or the registry (Postgres) could not be reached; retry shortly', cause);
  }
}
