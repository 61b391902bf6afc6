import type { Knex } from '@bus/db';
import type { ReadinessCheck, Service } from '@bus/http';
import type { Kafka } from '@bus/kafka';
import { audienceFor } from '@bus/tokens';
import type { Logger } from 'pino';
import { createBearerAuthenticator, type BearerAuthenticator } from './authenticate';
import { ConnectionCache, KeySetCache } from './cache';
import { createControlListener } from './control';
import { KnexIdentityStore, type IdentityStore } from './store';

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
  now?: () => Date;
  /** Tests pass a store of their own; the knex store otherwise. */
  store?: IdentityStore;
}

export interface Identity extends BearerAuthenticator {
  store: IdentityStore;
  connections: ConnectionCache;
  keys: KeySetCache;
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
  const now = deps.now ?? (() => new Date());
  const store = deps.store ?? KnexIdentityStore.create(deps.db);
  const connections = new ConnectionCache(store, deps.cacheTtlMs, now);
  const keys = new KeySetCache(store, now);
  const listener = createControlListener({
    kafka: deps.kafka,
    name: `identity.${deps.name}`,
    logger: deps.logger,
    onEvent: (event) => {
      if (event.type === 'connection.changed') connections.invalidate(event.connection_id);
      // An app's change can move every connection of it; those are few, so drop them all.
      else if (event.type === 'app.changed') connections.clear();
      // quota.changed: the cache holds no quotas (they are read per request).
    },
  });
  const authenticator = createBearerAuthenticator({ connections, keys, audience: audienceFor(deps.baseUrl), now });
  return {
    ...authenticator,
    store,
    connections,
    keys,
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
