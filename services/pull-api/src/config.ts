import type { VarReader } from '@bus/config';
import type { Knex } from '@bus/db';
import type { Logger, Registry } from '@bus/observability';
import type { PullApiServiceDeps } from './service';

/** A base64 value of at least `bytes` bytes. Never echoed: it is a secret. */
function base64Key(bytes: number): VarReader<Buffer> {
  const describe = `base64 of at least ${bytes} random bytes (e.g. \`openssl rand -base64 ${bytes}\`)`;
  return {
    describe,
    read: (raw) => {
      if (raw === undefined) throw new Error(`is required (${describe})`);
      const value = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
      if (value.length < bytes) throw new Error(`must be ${describe}`);
      return value;
    },
  };
}

/** The pull API's own variables (on top of Postgres and the identity settings). */
export const pullApiConfig = {
  /** HMAC-SHA256 key of receipt handles; every pull-api process of an environment shares it. */
  RECEIPT_HANDLE_KEY: base64Key(32),
} as const;

/**
 * The pull API's dependencies from its configuration and the process's clients: one mapping for every
 * composition root (the pull API's main and the all-in-one), which add readiness.
 */
export function pullApiDepsOf(
  clients: Pick<PullApiServiceDeps, 'authenticator' | 'connectionQuota'> & { db: Knex; logger: Logger; metrics: Registry },
  config: { DATABASE_URL: string; RECEIPT_HANDLE_KEY: Buffer },
): Omit<PullApiServiceDeps, 'readiness'> {
  return { ...clients, databaseUrl: config.DATABASE_URL, receiptHandleKey: config.RECEIPT_HANDLE_KEY };
}
