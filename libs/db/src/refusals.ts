import type { Knex } from 'knex';

/** The newest refusals kept per producer connection (issue 17); older ones are trimmed as new ones are written. */
export const REFUSALS_KEPT = 100;

/** One publish or validate refusal as recorded: what the producer sent it as, never the body. */
export interface RefusalRecord {
  workspaceId: string;
  connectionId: string;
  mode: 'publish' | 'validate';
  messageId: string | null;
  messageType: string | null;
  correlationId: string | null;
  status: number;
  violations: ReadonlyArray<{ source: string; rule: string; message: string; path?: string }>;
  refusedAt: Date;
}

/** Rate-limit refusals of one connection since the last write. */
export interface RateLimitCount {
  connectionId: string;
  rateLimited: number;
  quotaExceeded: number;
  lastRefusedAt: Date;
}

/**
 * Writes a batch in one transaction: the refusals, then the trim of each connection written to down
 * to its newest REFUSALS_KEPT, then the rate-limit counters.
 */
export async function writeRefusals(db: Knex, refusals: readonly RefusalRecord[], counts: readonly RateLimitCount[]): Promise<void> {
  await db.transaction(async (trx) => {
    if (refusals.length > 0) {
      await trx('refusals').insert(
        refusals.map((r) => ({
          workspace_id: r.workspaceId,
          connection_id: r.connectionId,
          mode: r.mode,
          message_id: r.messageId,
          message_type: r.messageType,
          correlation_id: r.correlationId,
          status: r.status,
          violations: JSON.stringify(r.violations),
          refused_at: r.refusedAt,
        })),
      );
      const connections = [...new Set(refusals.map((r) => r.connectionId))];
      await trx.raw(
        `DELETE FROM refusals r
          USING unnest(?::text[]) AS c(id)
          WHERE r.connection_id = c.id
            AND r.id < (SELECT k.id FROM refusals k WHERE k.connection_id = c.id ORDER BY k.id DESC OFFSET ? LIMIT 1)`,
        [connections, REFUSALS_KEPT - 1],
      );
    }
    for (const count of counts) {
      await trx.raw(
        `INSERT INTO refusal_counters AS rc (connection_id, rate_limited, quota_exceeded, last_refused_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (connection_id) DO UPDATE
            SET rate_limited = rc.rate_limited + EXCLUDED.rate_limited,
                quota_exceeded = rc.quota_exceeded + EXCLUDED.quota_exceeded,
                last_refused_at = GREATEST(rc.last_refused_at, EXCLUDED.last_refused_at)`,
        [count.connectionId, count.rateLimited, count.quotaExceeded, count.lastRefusedAt],
      );
    }
  });
}

/** The answer of GET /v1/tenants/{t}/refusals (bus.json RecentRefusals). */
export interface RecentRefusals {
  connection_id: string;
  refusals: Array<{
    mode: 'publish' | 'validate';
    message_id: string | null;
    message_type: string | null;
    correlation_id: string | null;
    status: number;
    violations: Array<{ source: string; rule: string; message: string; path?: string }>;
    refused_at: string;
  }>;
  rate_limited: { rate_limited: number; quota_exceeded: number; last_refused_at: string | null };
}

/** The connection's newest refusals (at most REFUSALS_KEPT, newest first) and its rate-limit counters. */
export async function readRecentRefusals(db: Knex, connectionId: string): Promise<RecentRefusals> {
  const rows = await db('refusals')
    .where({ connection_id: connectionId })
    .orderBy('id', 'desc')
    .limit(REFUSALS_KEPT)
    .select('mode', 'message_id', 'message_type', 'correlation_id', 'status', 'violations', 'refused_at');
  const counter = await db('refusal_counters').where({ connection_id: connectionId }).first('rate_limited', 'quota_exceeded', 'last_refused_at');
  return {
    connection_id: connectionId,
    refusals: rows.map((r) => ({
      mode: r.mode,
      message_id: r.message_id,
      message_type: r.message_type,
      correlation_id: r.correlation_id,
      status: r.status,
      violations: r.violations,
      refused_at: r.refused_at.toISOString(),
    })),
    rate_limited: {
      rate_limited: Number(counter?.rate_limited ?? 0),
      quota_exceeded: Number(counter?.quota_exceeded ?? 0),
      last_refused_at: counter ? counter.last_refused_at.toISOString() : null,
    },
  };
}
