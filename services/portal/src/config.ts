import { int, oneOf, optional, str, url, type ConfigOf } from '@bus/config';
import type { QueueOperations } from '@bus/contracts';
import type { Knex } from '@bus/db';
import { createControlPublisher, encryptionKeyConfig, identityProviderConfig } from '@bus/identity';
import type { Producer } from '@bus/kafka';
import type { Redis } from '@bus/limits';
import type { Logger } from '@bus/observability';
import { peopleConfig, peopleSignInOf } from './people/config';
import type { PortalServiceDeps } from './service';

/** The portal's own variables (on top of Postgres, Redis and Kafka). */
export const portalConfig = {
  /** The operator's client id for the admin API (HTTP Basic user name). */
  OPERATOR_CLIENT_ID: str({ pattern: /^[A-Za-z0-9._-]{1,64}$/ }),
  /** The operator's secret; never logged. At least 24 characters (e.g. `openssl rand -hex 24`). */
  OPERATOR_CLIENT_SECRET: str({ minLength: 24 }),
  /** Admin requests a minute per source address (docs/api.md#limits "any route" limit by default). */
  ADMIN_LIMIT_PER_ADDRESS_PER_MINUTE: int({ min: 1, max: 1_000_000, default: 600 }),
  ...identityProviderConfig,
  /** Seals the AWS principals' secret access keys (the gateway opens them with the same key). */
  ...encryptionKeyConfig,
  ...peopleConfig,
  /** Which hosted environment this is: consumer fault injection is refused outside a Sandbox (docs/testing-tools.md). */
  BUS_ENVIRONMENT: oneOf(['sandbox', 'preview'], { default: 'sandbox' }),
  /**
   * The bus's publish routes (the gateway) as the portal reaches them, for publishing from a producer
   * connection's page: the simulated producer and a test message (docs/portal.md#publishing-from-a-producers-page);
   * unset turns both off.
   */
  PORTAL_BUS_URL: optional(url({ protocols: ['http:', 'https:'] })),
  /** The bus's token route (the auth service) as the portal reaches it, when it is not at PORTAL_BUS_URL. */
  PORTAL_BUS_AUTH_URL: optional(url({ protocols: ['http:', 'https:'] })),
} as const;

/**
 * The admin API's dependencies from its configuration and the process's clients: one mapping for
 * every composition root (the portal's main and the all-in-one), which add readiness and metrics and
 * hand in the queue operations (libs/queue queueOperations).
 */
export function portalDepsOf(
  clients: { db: Knex; redis: Redis; producer: Producer; logger: Logger; queues: QueueOperations },
  config: ConfigOf<typeof portalConfig> & { KAFKA_MESSAGES_RETENTION: number },
): Omit<PortalServiceDeps, 'readiness' | 'limitMetrics'> {
  return {
    db: clients.db,
    redis: clients.redis,
    logger: clients.logger,
    control: createControlPublisher(clients.producer),
    queues: clients.queues,
    operator: { clientId: config.OPERATOR_CLIENT_ID, clientSecret: config.OPERATOR_CLIENT_SECRET },
    perAddressPerMinute: config.ADMIN_LIMIT_PER_ADDRESS_PER_MINUTE,
    archiveMs: config.KAFKA_MESSAGES_RETENTION,
    allowHttpLoopbackJwks: config.IDENTITY_PROVIDER_ALLOW_HTTP_LOOPBACK,
    encryptionKey: config.SIGNING_KEY_ENCRYPTION_KEY,
    signIn: peopleSignInOf(config),
    environment: config.BUS_ENVIRONMENT,
    ...(config.PORTAL_BUS_URL === undefined
      ? {}
      : { bus: { gatewayUrl: config.PORTAL_BUS_URL, authUrl: config.PORTAL_BUS_AUTH_URL ?? config.PORTAL_BUS_URL } }),
  };
}
