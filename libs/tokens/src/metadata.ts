import type { TokenAudience } from './claims';

/**
 * RFC 8414 authorization server metadata of the token service, so OAuth libraries (openid-client's
 * discovery, and their kin in other languages) find the token endpoint and the key set from the
 * issuer alone. Derived from the same TokenAudience as every token's `iss`, so the two cannot
 * disagree. The bus issues client-credentials tokens only and has no authorization endpoint.
 */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  jwks_uri: string;
  grant_types_supported: ['client_credentials'];
  /**
   * RFC 8414 requires the member and libraries (authlib's validate()) refuse an empty list. `none` (OAuth
   * 2.0 Multiple Response Type Encoding Practices §4) is the response type that hands out nothing at an
   * authorization endpoint: true of a server that has none.
   */
  response_types_supported: ['none'];
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'];
  /** Not registered by RFC 8414: the algorithm access tokens are signed with (RFC 9068 names none). */
  access_token_signing_alg_values_supported: ['ES256'];
}

export function authorizationServerMetadata(audience: TokenAudience): AuthorizationServerMetadata {
  return {
    issuer: audience.issuer,
    token_endpoint: `${audience.issuer}/token`,
    jwks_uri: `${audience.issuer}/jwks`,
    grant_types_supported: ['client_credentials'],
    response_types_supported: ['none'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    access_token_signing_alg_values_supported: ['ES256'],
  };
}

/**
 * Where the document is served, as paths on the bus host: RFC 8414 §3.1's form (the well-known
 * segment between the host and the issuer's path) and the appended form that many libraries try
 * (`{issuer}/.well-known/oauth-authorization-server`).
 */
export function metadataPaths(audience: TokenAudience): string[] {
  const issuerPath = new URL(audience.issuer).pathname;
  return [`/.well-known/oauth-authorization-server${issuerPath}`, `${issuerPath}/.well-known/oauth-authorization-server`];
}
