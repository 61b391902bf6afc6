import { importPublicJwk, publishedKeysAt, type AccessTokenClaims, type PublicJwk } from '@bus/tokens';
import type { KeyObject } from 'node:crypto';
import type { ConnectionRecord, IdentityStore } from './store';

/** docs/api.md#authentication rule 5 and #limits: changes apply within about 30 s; a cached entry never outlives this bound. */
export const MAX_CACHE_TTL_MS = 30_000;

export class CacheTtlError extends Error {
  override readonly name = 'CacheTtlError';
}

/**
 * Values read through a short per-process cache (connections, quota allowances, permissions). Control
 * events drop an entry at once (target ≤ 2 s); the TTL is the bound when an event is lost or the
 * control topic is down. Concurrent misses share one read; a failed read is not cached. Expired
 * entries go as they are met and whenever a value is remembered; at most `maxEntries` are held, past
 * it the oldest entry goes. Map keeps insertion order, and each entry is re-inserted with the same TTL,
 * so the oldest entries are the first to expire: eviction looks at the front only.
 */
export class ReadThroughCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  private generation = 0;

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly ttlMs: number,
    private readonly now: () => Date = () => new Date(),
    private readonly maxEntries = 100_000,
  ) {
    if (ttlMs < 0 || ttlMs > MAX_CACHE_TTL_MS) throw new CacheTtlError(`the identity cache TTL must be at most ${MAX_CACHE_TTL_MS} ms`);
  }

  async get(key: string): Promise<V> {
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.expires > this.now().getTime()) return hit.value;
      this.entries.delete(key);
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const load = this.load(key)
      .then((value) => {
        // An invalidation that arrived while the read ran wins: the read may predate the change.
        if (generation === this.generation) this.remember(key, value);
        return value;
      })
      .finally(() => this.loading.delete(key));
    this.loading.set(key, load);
    return load;
  }

  invalidate(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.loading.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  private remember(key: string, value: V): void {
    const now = this.now().getTime();
    this.entries.delete(key);
    for (const [oldest, entry] of this.entries) {
      if (entry.expires > now && this.entries.size < this.maxEntries) break;
      this.entries.delete(oldest);
    }
    this.entries.set(key, { value, expires: now + this.ttlMs });
  }

  /** Entries held, expired ones not yet evicted included (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }
}

/** Connections by client id (null: no such connection — cached too, so a flood of unknown ids costs one read each per TTL). */
export class ConnectionCache extends ReadThroughCache<ConnectionRecord | null> {
  constructor(store: IdentityStore, ttlMs: number, now: () => Date = () => new Date()) {
    super((clientId) => store.connection(clientId), ttlMs, now);
  }
}

/**
 * The verifier's copy of our own published keys. Refreshed every `refreshMs`, and on an unknown kid
 * at most once per `missRefreshMs` (a new key is published ten minutes before it signs, so a miss
 * is nearly always a forged or foreign kid, which must not turn into a database read per request).
 */
export class KeySetCache {
  private keys = new Map<string, KeyObject>();
  private loadedAt = -Infinity;
  private missRefreshAt = -Infinity;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly store: IdentityStore,
    private readonly now: () => Date = () => new Date(),
    private readonly refreshMs = 60_000,
    private readonly missRefreshMs = 5_000,
  ) {}

  async get(kid: string): Promise<KeyObject | undefined> {
    const t = this.now().getTime();
    if (t - this.loadedAt >= this.refreshMs) await this.refresh();
    else if (!this.keys.has(kid) && t - this.missRefreshAt >= this.missRefreshMs) {
      this.missRefreshAt = t;
      await this.refresh();
    }
    return this.keys.get(kid);
  }

  /** The current map, for verifyAccessToken after `get` warmed it. */
  snapshot(): ReadonlyMap<string, KeyObject> {
    return this.keys;
  }

  private async refresh(): Promise<void> {
    this.loading ??= (async () => {
      try {
        const published = publishedKeysAt(await this.store.signingKeys(), this.now());
        this.keys = new Map(published.map((k) => [k.kid, importPublicJwk(k.publicJwk as PublicJwk)]));
        this.loadedAt = this.now().getTime();
      } finally {
        this.loading = undefined;
      }
    })();
    await this.loading;
  }
}

/**
 * Access tokens whose signature and claims verified, kept until their exp so a client sending the
 * same token on every request pays for one ES256 verification, not one per request. An entry counts
 * only while its kid is still in the key set (a withdrawn key ends its tokens at the next key
 * refresh) and its exp, with the verifier's leeway, has not passed; the connection behind the token
 * (credential version, status, kind, tenancy) is still checked on every request by authorizeBearer.
 * Bounded: past `maxEntries` the oldest entry goes.
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, { claims: AccessTokenClaims; kid: string }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(token: string, keys: ReadonlyMap<string, KeyObject>, now: Date, leewaySeconds: number): AccessTokenClaims | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (!keys.has(hit.kid) || hit.claims.exp <= Math.floor(now.getTime() / 1000) - leewaySeconds) {
      this.entries.delete(token);
      return undefined;
    }
    return hit.claims;
  }

  /**
   * The kid of a token verified before and still held (not checked against the key set or exp: `get`
   * does that), so a request with it skips decoding the token's header and payload again.
   */
  heldKid(token: string): string | undefined {
    return this.entries.get(token)?.kid;
  }

  remember(token: string, kid: string, claims: AccessTokenClaims): void {
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { claims, kid });
  }
}
