import { bool, duration, url } from '@bus/config';
import { MAX_CACHE_TTL_MS } from './cache';

/** The bus base address: tokens carry iss {base}/v1/oauth and aud {base}, so they only work at home. */
export const busBaseUrlConfig = {
  BUS_BASE_URL: url({ protocols: ['http:', 'https:'] }),
} as const;

/** Every process with bearer routes: the base address and the identity cache's upper bound. */
export const identityConfig = {
  ...busBaseUrlConfig,
  /** How long a cached connection may be used without a control event; spec: changes apply within ~30 s. */
  IDENTITY_CACHE_TTL: duration({ default: 10_000, max: MAX_CACHE_TTL_MS }),
} as const;

/**
 * External identity providers (docs/auth.md): a JWKS URL must be https. Tests (and only tests) set
 * this to let http://127.0.0.1, http://[::1] or http://localhost through, for a local issuer.
 */
export const identityProviderConfig = {
  IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK: bool({ default: false }),
} as const;
