import { importPublicJwk, publishedKeysAt, type PublicJwk } from '@bus/tokens';
import type { KeyObject } from 'node:crypto';
import type { ConnectionRecord, IdentityStore } from './store';

/** Spec §5 rule 5 / §8: changes apply within about 30 s; a cached entry never outlives this bound. */
export const MAX_CACHE_TTL_MS = 30_000;

export class CacheTtlError extends Error {
  override readonly name = 'CacheTtlError';
}

/**
 * Connections read through a short cache. Control events drop an entry at once (target ≤ 2 s); the
 * TTL is the bound when an event is lost or the control topic is down. Concurrent misses share one read.
 */
export class ConnectionCache {
  private readonly entries = new Map<string, { value: ConnectionRecord | null; expires: number }>();
  private readonly loading = new Map<string, Promise<ConnectionRecord | null>>();
  private generation = 0;

  constructor(
    private readonly store: IdentityStore,
    private readonly ttlMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {
    if (ttlMs < 0 || ttlMs > MAX_CACHE_TTL_MS) throw new CacheTtlError(`the identity cache TTL must be at most ${MAX_CACHE_TTL_MS} ms`);
  }

  async get(clientId: string): Promise<ConnectionRecord | null> {
    const hit = this.entries.get(clientId);
    if (hit && hit.expires > this.now().getTime()) return hit.value;
    const pending = this.loading.get(clientId);
    if (pending) return pending;
    const generation = this.generation;
    const load = this.store.connection(clientId).then(
      (value) => {
        // An invalidation that arrived while the read ran wins: the read may predate the change.
        if (generation === this.generation) this.entries.set(clientId, { value, expires: this.now().getTime() + this.ttlMs });
        return value;
      },
    ).finally(() => this.loading.delete(clientId));
    this.loading.set(clientId, load);
    return load;
  }

  invalidate(clientId: string): void {
    this.generation++;
    this.entries.delete(clientId);
    this.loading.delete(clientId);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
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
