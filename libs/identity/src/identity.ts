import type { Knex } from '@bus/db';
import type { ReadinessCheck, Service } from '@bus/http';
import type { Kafka } from '@bus/kafka';
import { audienceFor } from '@bus/tokens';
import type { Logger } from 'pino';
import { createBearerAuthenticator, type BearerAuthenticator, type VerifiedBearerTokens } from './authenticate';
import { ConnectionCache, KeySetCache, ReadThroughCache } from './cache';
import { createControlListener, type ControlEvent } from './control';
import { KnexQuotaStore, type QuotaStore } from './quota';
import { KnexIdentityStore, type IdentityStore } from './store';
import { createConnectionUse, type ConnectionUse } from './connection-use';
import { bindingKey, createBoundClients, ExternalTokenVerifier, KnexProviderStore, parseBindingKey } from './providers';

export interface IdentityDeps {
  db: Knex;
  kafka: Kafka;
  logger: Logger;
  /** BUS_BASE_URL. */
  baseUrl: string;
  /** IDENTITY_CACHE_TTL. */
  cacheTtlMs: number;
  /** Names this process's control-topic consumer group (a unique suffix is added). */
  name: string;
}

/** Which keys of a cache a control event makes stale: some, all, or none. */
export type StaleKeys = (event: ControlEvent) => readonly string[] | 'all';

export interface Identity extends BearerAuthenticator, VerifiedBearerTokens {
  store: IdentityStore;
  connections: ConnectionCache;
  keys: KeySetCache;
  /** Each connection's quota allowance (docs/api.md#limits), cached like connections; dropped by quota, app and connection changes. */
  quotas: QuotaStore;
  /** External providers' tokens are verified with it; operator-managed apps share it (one fetch per JWKS URL). */
  externalTokens: ExternalTokenVerifier;
  /** Records a publish's or a receive's use of its connection (last_used_at, to the minute; never a write per request). */
  connectionUse: ConnectionUse;
  /**
   * A cache of this process's own (the gateway's permissions, say) that the control topic drops
   * entries of, with IDENTITY_CACHE_TTL as the backstop: `stale` names what an event changes.
   */
  cache<V>(load: (key: string) => Promise<V>, stale: StaleKeys): ReadThroughCache<V>;
  /** Background work: the control-topic listener that drops cached connections. Start it with the process. */
  service: Service;
  /**
   * `control-topic`, optional: degraded (still ready) until the listener reads the control topic, since
   * requests are served meanwhile — a change then reaches this process within IDENTITY_CACHE_TTL
   * instead of at once. Add it to the readiness of the services that authenticate with this identity.
   */
  controlReadiness: ReadinessCheck;
}

/** The shared view of identity for the bearer routes of one process. */
export function createIdentity(deps: IdentityDeps): Identity {
  const store = KnexIdentityStore.create(deps.db);
  const connections = new ConnectionCache(store, deps.cacheTtlMs);
  const keys = new KeySetCache(store);
  const caches: Array<{ cache: ReadThroughCache<unknown>; stale: StaleKeys }> = [
    // An app's change can move every connection of it; those are few, so drop them all.
    { cache: connections, stale: (event) => (event.type === 'connection.changed' ? [event.connection_id] : event.type === 'app.changed' ? 'all' : []) },
  ];
  const cache = <V>(load: (key: string) => Promise<V>, stale: StaleKeys): ReadThroughCache<V> => {
    const created = new ReadThroughCache(load, deps.cacheTtlMs);
    caches.push({ cache: created as ReadThroughCache<unknown>, stale });
    return created;
  };
  const quotaStore = KnexQuotaStore.create(deps.db);
  // A quota change names a workspace or an organisation, not the connections under it: tier changes
  // are rare, so every cached allowance goes.
  const quotas = cache(
    (clientId) => quotaStore.quota(clientId),
    (event) =>
      event.type === 'connection.changed' ? [event.connection_id] : event.type === 'provider.changed' || event.type === 'binding.changed' ? [] : 'all',
  );
  // External identity providers by issuer, and their bindings: a provider's change drops it and,
  // since its bindings may have gone with it, every binding (providers change rarely).
  const providerStore = KnexProviderStore.create(deps.db);
  const externalTokens = new ExternalTokenVerifier();
  const providers = cache(
    (issuer) => providerStore.providerByIssuer(issuer),
    (event) => (event.type === 'provider.changed' ? [event.issuer] : []),
  );
  const bindings = cache(
    (key) => {
      const { providerId, client } = parseBindingKey(key);
      return providerStore.binding(providerId, client);
    },
    (event) => (event.type === 'provider.changed' ? 'all' : event.type === 'binding.changed' ? [bindingKey(event.provider_id, event.client)] : []),
  );
  const listener = createControlListener({
    kafka: deps.kafka,
    name: `identity.${deps.name}`,
    logger: deps.logger,
    onEvent: (event) => {
      // A provider's JWKS URL may have changed with it: its key set is fetched anew.
      if (event.type === 'provider.changed') externalTokens.forget();
      for (const { cache: c, stale } of caches) {
        const keysOf = stale(event);
        if (keysOf === 'all') c.clear();
        else for (const key of keysOf) c.invalidate(key);
      }
    },
  });
  const authenticator = createBearerAuthenticator({
    connections,
    keys,
    audience: audienceFor(deps.baseUrl),
    boundClients: createBoundClients({ providers, bindings, verifier: externalTokens }),
  });
  return {
    ...authenticator,
    store,
    connections,
    keys,
    quotas: { quota: (clientId) => quotas.get(clientId) },
    externalTokens,
    connectionUse: createConnectionUse({ db: deps.db, logger: deps.logger }),
    cache,
    service: { name: 'identity', routers: [], readiness: [], start: () => listener.start(), stop: () => listener.stop() },
    controlReadiness: {
      name: 'control-topic',
      optional: true,
      check: async () => {
        if (!listener.live()) throw new Error('not reading the control topic yet: changes arrive within the identity cache TTL');
      },
    },
  };
}
