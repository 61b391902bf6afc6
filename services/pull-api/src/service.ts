import { notImplementedRouter, type ReadinessCheck, type Service } from '@bus/http';
import { readSkillRegistrations, type Knex } from '@bus/db';
import type { BearerAuthenticator } from '@bus/identity';
import type { Logger } from '@bus/observability';
import { createPgQueueNotifier } from './notifier';
import { KnexQueueStore } from './queue-store';
import { createReceiptHandles } from './receipt';
import { pullRoutes } from './pull-routes';

export interface PullApiServiceDeps {
  /** Postgres (the consumer queues) readiness. */
  readiness: ReadinessCheck[];
  /**
   * The queues and the credentials behind consumer tokens. Without them (a process that does not
   * wire the pull API yet) every consumer route answers 501.
   */
  queues?: {
    db: Knex;
    /** Postgres URL for the dedicated LISTEN connection of the long poll. */
    databaseUrl: string;
    authenticator: BearerAuthenticator;
    /** HMAC key of the receipt handles (RECEIPT_HANDLE_KEY); all pull-api processes share it. */
    receiptHandleKey: Buffer;
    logger: Logger;
  };
}

/** Consumer routes: receive (long poll), ack, nack, skills (spec §2.8, §4; DESIGN §5). */
export function createPullApiService(deps: PullApiServiceDeps): Service {
  const base = '/v1/tenants/:t/consumers/:c';
  const q = deps.queues;
  if (!q) {
    return {
      name: 'pull-api',
      routers: [
        notImplementedRouter([
          ['get', `${base}/messages`],
          ['post', `${base}/ack`],
          ['post', `${base}/nack`],
          ['get', `${base}/skills`],
        ]),
      ],
      readiness: deps.readiness,
    };
  }
  const notifier = createPgQueueNotifier({ url: q.databaseUrl, logger: q.logger });
  return {
    name: 'pull-api',
    routers: [
      pullRoutes({
        authenticator: q.authenticator,
        pull: { store: KnexQueueStore.create(q.db), notifier, handles: createReceiptHandles(q.receiptHandleKey) },
        registrations: (consumerId) => readSkillRegistrations(q.db, consumerId),
      }),
    ],
    // A lost LISTEN connection is not a readiness matter: the notifier reconnects and wakes every
    // waiter meanwhile, and receives still read Postgres.
    readiness: deps.readiness,
    start: () => notifier.start(),
    stop: () => notifier.stop(),
  };
}
