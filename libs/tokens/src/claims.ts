import { randomUUID } from 'node:crypto';

/** docs/api.md#token-response: every access token lives one hour; there is no refresh token. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** docs/api.md#access-token: both hosted environments issue this value. */
export const TOKEN_ENVIRONMENT = 'sandbox';

/** Claims of a bus access token, exactly docs/api.md#access-token. */
export interface AccessTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  tenant: string;
  org: string;
  app: string;
  environment: string;
  credential_version: number;
  iat: number;
  exp: number;
  jti: string;
}

export const CLAIM_NAMES = ['iss', 'aud', 'sub', 'tenant', 'org', 'app', 'environment', 'credential_version', 'iat', 'exp', 'jti'] as const;

/** The issuer and audience a deployment at `baseUrl` issues and accepts (docs/api.md#access-token, #authentication rule 1). */
export interface TokenAudience {
  issuer: string;
  audience: string;
  environment: string;
}

export class BaseUrlError extends Error {
  override readonly name = 'BaseUrlError';
}

/** {base_url} without a trailing slash; iss = {base_url}/v1/oauth, aud = {base_url}. */
export function audienceFor(baseUrl: string): TokenAudience {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new BaseUrlError('the bus base URL is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new BaseUrlError('the bus base URL must be http(s)');
  if (url.search || url.hash || url.username || url.password) throw new BaseUrlError('the bus base URL must not carry a query, fragment or user');
  const base = `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  return { issuer: `${base}/v1/oauth`, audience: base, environment: TOKEN_ENVIRONMENT };
}

export interface ClaimsInput {
  audience: TokenAudience;
  clientId: string;
  workspaceId: string;
  organisationId: string;
  appId: string;
  credentialVersion: number;
  now: Date;
  /** Unique token id; a random UUID when omitted. */
  jti?: string;
}

/** The claims of a new access token: identity only, never permissions (docs/api.md#access-token). */
export function buildClaims(input: ClaimsInput): AccessTokenClaims {
  const iat = Math.floor(input.now.getTime() / 1000);
  return {
    iss: input.audience.issuer,
    aud: input.audience.audience,
    sub: input.clientId,
    tenant: input.workspaceId,
    org: input.organisationId,
    app: input.appId,
    environment: input.audience.environment,
    credential_version: input.credentialVersion,
    iat,
    exp: iat + ACCESS_TOKEN_TTL_SECONDS,
    jti: input.jti ?? randomUUID(),
  };
}
