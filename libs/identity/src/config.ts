import { duration, url, type VarReader } from '@bus/config';
import { MAX_CACHE_TTL_MS } from './cache';

/** The bus base address: tokens carry iss {base}/v1/oauth and aud {base}, so they only work at home. */
export const busBaseUrlConfig = {
  BUS_BASE_URL: url({ protocols: ['http:', 'https:'] }),
} as const;

function boundedDuration(defaultMs: number, maxMs: number): VarReader<number> {
  const inner = duration({ default: defaultMs });
  return {
    describe: `${inner.describe}, at most ${maxMs / 1000}s`,
    read: (raw) => {
      const value = inner.read(raw);
      if (value > maxMs) throw new Error(`must be at most ${maxMs / 1000}s, got "${raw}"`);
      return value;
    },
  };
}

/** Every process with bearer routes: the base address and the identity cache's upper bound. */
export const identityConfig = {
  ...busBaseUrlConfig,
  /** How long a cached connection may be used without a control event; spec: changes apply within ~30 s. */
  IDENTITY_CACHE_TTL: boundedDuration(10_000, MAX_CACHE_TTL_MS),
} as const;
