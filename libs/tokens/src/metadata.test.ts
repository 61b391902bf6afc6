import { audienceFor } from './claims';
import { authorizationServerMetadata, metadataPaths } from './metadata';

describe('RFC 8414 authorization server metadata', () => {
  it('names the issuer of every token, its token endpoint and key set, and what the bus supports', () => {
    expect(authorizationServerMetadata(audienceFor('https://bus.example.test'))).toEqual({
      issuer: 'https://bus.example.test/v1/oauth',
      token_endpoint: 'https://bus.example.test/v1/oauth/token',
      jwks_uri: 'https://bus.example.test/v1/oauth/jwks',
      grant_types_supported: ['client_credentials'],
      response_types_supported: ['none'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      access_token_signing_alg_values_supported: ['ES256'],
    });
  });

  it('is served where RFC 8414 §3.1 puts it for an issuer with a path, and at the appended spelling', () => {
    expect(metadataPaths(audienceFor('https://bus.example.test/'))).toEqual([
      '/.well-known/oauth-authorization-server/v1/oauth',
      '/v1/oauth/.well-known/oauth-authorization-server',
    ]);
    expect(metadataPaths(audienceFor('https://host.example.test/sandbox'))[0]).toBe('/.well-known/oauth-authorization-server/sandbox/v1/oauth');
  });
});
