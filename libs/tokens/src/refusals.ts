/**
 * Why a bearer token is refused (docs/api.md#authentication rules 1–4). Pure classes: the HTTP layer maps `status` and
 * `rule` onto its own error set; `reason` is for logs and tests, never for the caller.
 */
export abstract class BearerRefusal extends Error {
  abstract readonly status: 401 | 403;
  abstract readonly rule: 'producer.unauthenticated' | 'producer.not_registered' | 'tenant.mismatch';
}

export type UnauthenticatedReason =
  | 'missing'
  | 'malformed'
  | 'algorithm'
  | 'header'
  | 'unknown_key'
  | 'signature'
  | 'expired'
  | 'not_yet_valid'
  | 'issuer'
  | 'audience'
  | 'environment'
  | 'claims'
  | 'unknown_connection'
  | 'credential_version'
  | 'workspace_left';

/** 401 producer.unauthenticated: missing, invalid, expired, rotated away, other environment, or the app left. */
export class TokenRejectedError extends BearerRefusal {
  override readonly name = 'TokenRejectedError';
  readonly status = 401;
  readonly rule = 'producer.unauthenticated';
  constructor(readonly reason: UnauthenticatedReason) {
    super(MESSAGES[reason]);
  }
}

const MESSAGES: Record<UnauthenticatedReason, string> = {
  missing: 'A bearer token is required',
  malformed: 'The bearer token is not a valid access token',
  algorithm: 'The bearer token is not a valid access token',
  header: 'The bearer token is not a valid access token',
  unknown_key: 'The bearer token is not a valid access token',
  signature: 'The bearer token is not a valid access token',
  expired: 'The bearer token has expired; fetch a new one',
  not_yet_valid: 'The bearer token is not a valid access token',
  issuer: 'The bearer token was not issued for this environment',
  audience: 'The bearer token was not issued for this environment',
  environment: 'The bearer token was not issued for this environment',
  claims: 'The bearer token is not a valid access token',
  unknown_connection: 'The bearer token is not a valid access token',
  credential_version: 'The bearer token was issued before a credential rotation; fetch a new one',
  workspace_left: 'The app no longer belongs to the workspace of this token',
};

const NOT_REGISTERED_MESSAGES = {
  not_active: 'The connection is not active',
  wrong_kind: 'The connection may not use this route',
  principal_unverified: 'The AWS principal is not verified yet: sign POST /v1/tenants/{t}/principals/verify with the challenge the operator issued',
  unbound: "The identity provider's client is not bound to a connection",
  managed_client: "No operator-managed app of the token's issuer names its client",
  managed_connection: "The operator-managed app's configured connection is not a producer of its configured app and workspace",
} as const;

/**
 * 403 producer.not_registered: the connection is not active, or of the wrong kind for the route, or
 * the AWS principal is unverified, or (an external provider's token) the provider's client is bound
 * to no connection, or (an operator-managed app) no entry names the client or the entry's configured
 * connection does not fit it.
 */
export class NotRegisteredError extends BearerRefusal {
  override readonly name = 'NotRegisteredError';
  readonly status = 403;
  readonly rule = 'producer.not_registered';
  constructor(readonly reason: keyof typeof NOT_REGISTERED_MESSAGES) {
    super(NOT_REGISTERED_MESSAGES[reason]);
  }
}

/** 403 tenant.mismatch: the path's workspace is not the token's. */
export class TenantMismatchError extends BearerRefusal {
  override readonly name = 'TenantMismatchError';
  readonly status = 403;
  readonly rule = 'tenant.mismatch';
  constructor() {
    super("The workspace in the path is not the token's workspace");
  }
}
