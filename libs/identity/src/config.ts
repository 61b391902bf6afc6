import { base64Key, bool, duration, int, str, url } from '@bus/config';
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

/**
 * The key-encryption key of the bus's secrets at rest: the token service's signing keys, and the
 * AWS principals' secret access keys (the portal seals them, the gateway opens them).
 */
export const encryptionKeyConfig = {
  SIGNING_KEY_ENCRYPTION_KEY: base64Key(32),
} as const;

/** Processes that verify AWS SigV4 signatures (docs/auth.md, "AWS SigV4"). */
export const sigv4Config = {
  ...encryptionKeyConfig,
  /** The region of every credential scope the bus accepts, e.g. eu-west-1. */
  AWS_SIGV4_REGION: str({ pattern: /^[a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}$/, default: 'us-east-1' }),
  /** How far X-Amz-Date may be from the bus's clock, either way; at most AWS's 5 minutes. */
  AWS_SIGV4_MAX_SKEW: duration({ default: 5 * 60_000, min: 1_000, max: 5 * 60_000 }),
  /** All AWS-signed requests together, per second (docs/api.md#limits: 50). */
  AWS_SIGV4_LIMIT_PER_SECOND: int({ min: 1, max: 100_000, default: 50 }),
  /** ... in bursts of (docs/api.md#limits: 100); at least the rate. */
  AWS_SIGV4_LIMIT_BURST: int({ min: 1, max: 200_000, default: 100 }),
} as const;
