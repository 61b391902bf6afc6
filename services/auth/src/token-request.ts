import { OAuthError, readBasicAuthorization } from '@bus/http';

/** With Basic, a 401 carries this challenge (docs/api.md#token-requests; RFC 6749 §5.2, RFC 7617). */
export const BASIC_CHALLENGE = 'Basic realm="bus", charset="UTF-8"';
/** Every token-route answer, refusals included (docs/api.md#token-response). */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

export class InvalidRequestError extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_request', description, NO_STORE);
  }
}

export class UnsupportedGrantTypeError extends OAuthError {
  constructor() {
    super(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported', NO_STORE);
  }
}

/**
 * One answer for every failed client authentication: it never says which check failed. A 401 names
 * the scheme it takes (RFC 9110 §11.6.1), whichever way the client sent its credentials.
 */
export class InvalidClientError extends OAuthError {
  constructor() {
    super(401, 'invalid_client', 'Client authentication failed', { ...NO_STORE, 'WWW-Authenticate': BASIC_CHALLENGE });
  }
}

export class TemporarilyUnavailableError extends OAuthError {
  constructor() {
    super(503, 'temporarily_unavailable', 'Credentials could not be checked or the token could not be signed; retry with backoff', {
      ...NO_STORE,
      'Retry-After': '1',
    });
  }
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

export type TokenRequest =
  | { credentials: ClientCredentials }
  /** No client authentication at all: 401 invalid_client with a Basic challenge. */
  | { credentials: null };

/**
 * The client id of a Basic header when it is well formed, else undefined; never throws. The token
 * URL limits run on this before the body is read.
 */
export function basicClientId(authorization: string | undefined): string | undefined {
  try {
    return parseBasic(authorization)?.clientId;
  } catch {
    return undefined;
  }
}

/**
 * RFC 6749 §2.3.1: Authorization: Basic base64(form-encode(id) ":" form-encode(secret)). Returns
 * undefined without the header; throws invalid_request for another scheme or a malformed value.
 */
export function parseBasic(authorization: string | undefined): { clientId: string; clientSecret: string } | undefined {
  const basic = readBasicAuthorization(authorization);
  if (basic.kind === 'absent') return undefined;
  if (basic.kind === 'other-scheme') throw new InvalidRequestError('Client authentication must use HTTP Basic or the request body');
  if (basic.kind === 'malformed') throw new InvalidRequestError('Malformed Basic credentials');
  const clientId = formDecode(basic.userId);
  const clientSecret = formDecode(basic.password);
  if (clientId === undefined || clientSecret === undefined || clientId === '') throw new InvalidRequestError('Malformed Basic credentials');
  return { clientId, clientSecret };
}

/** application/x-www-form-urlencoded decoding of one value; undefined when a %-escape is malformed. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** True for application/x-www-form-urlencoded with any parameters (charset=utf-8, …). */
export function isFormContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/x-www-form-urlencoded\s*(;.*)?$/i.test(contentType.trim());
}

/**
 * Reads a token request (docs/api.md#token-requests, #errors) from the Authorization header and the form body. Order:
 * a malformed request (bad Basic, repeated parameters, two authentication methods) → invalid_request;
 * then grant_type; then which client authenticates.
 */
export function parseTokenRequest(authorization: string | undefined, body: string): TokenRequest {
  const basic = parseBasic(authorization);
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(body);
  } catch {
    throw new InvalidRequestError('The body is not application/x-www-form-urlencoded');
  }
  const seen = new Set<string>();
  for (const [name] of form) {
    if (seen.has(name)) throw new InvalidRequestError(`Parameter ${name} is repeated`);
    seen.add(name);
  }
  const bodyId = form.get('client_id');
  const bodySecret = form.get('client_secret');
  if (basic && bodySecret !== null) throw new InvalidRequestError('Use one client authentication method: HTTP Basic or the body, not both');
  if (basic && bodyId !== null && bodyId !== basic.clientId) throw new InvalidRequestError('client_id in the body names another client than HTTP Basic');

  const grant = form.get('grant_type');
  if (grant === null || grant === '') throw new InvalidRequestError('grant_type is required');
  if (grant !== 'client_credentials') throw new UnsupportedGrantTypeError();

  if (basic) return { credentials: basic };
  if (bodyId === null || bodySecret === null || bodyId === '') return { credentials: null };
  return { credentials: { clientId: bodyId, clientSecret: bodySecret } };
}
