import type { Knex } from 'knex';
import { writeRunValidations, type AcceptedValidate } from './test-runs';

/** The newest refusals kept per producer connection; older ones are trimmed as new ones are written. */
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
  /** Already bounded by the caller (STORED_VIOLATION_BOUNDS); `violationsOmitted` counts the rest. */
  violations: ReadonlyArray<{ source: string; rule: string; message: string; path?: string }>;
  violationsOmitted: number;
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
 * to its newest REFUSALS_KEPT, then the rate-limit counters, then the validates accepted during a run.
 */
export async function writeRefusals(
  db: Knex,
  refusals: readonly RefusalRecord[],
  counts: readonly RateLimitCount[],
  validates: readonly AcceptedValidate[] = [],
): Promise<void> {
  await db.transaction(async (trx) => {
    await writeRunValidations(trx, validates);
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
          violations_omitted: r.violationsOmitted,
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
    id: number;
    mode: 'publish' | 'validate';
    message_id: string | null;
    message_type: string | null;
    correlation_id: string | null;
    status: number;
    violations: Array<{ source: string; rule: string; message: string; path?: string }>;
    violations_omitted: number;
    refused_at: string;
  }>;
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: number | null;
  rate_limited: { rate_limited: number; quota_exceeded: number; last_refused_at: string | null };
}

export interface RefusalsPage {
  /** Refusals at most on this page (1..REFUSALS_PAGE_MAX). */
  limit: number;
  /** Only refusals older than this id (a previous page's next_before). */
  before?: number;
  /** Only refusals with a violation of this rule id. */
  rule?: string;
  /** Only refusals whose message id or correlation id contains this text (case-insensitive). */
  text?: string;
}

/** A page holds at most this many refusals, and stops early rather than pass REFUSALS_PAGE_BYTES of JSON. */
export const REFUSALS_PAGE_MAX = 50;
const REFUSALS_PAGE_BYTES = 56 * 1024;

/**
 * A page of the connection's newest refusals (newest first; those of a rule, or whose ids contain a
 * text, when asked) and its rate-limit counters. Each stored
 * refusal is small (a few violations, short fields), and a page stops before its JSON would pass
 * REFUSALS_PAGE_BYTES, so the answer stays under 64 KB whatever the refused bodies were.
 */
export async function readRecentRefusals(db: Knex, connectionId: string, page: RefusalsPage = { limit: 20 }): Promise<RecentRefusals> {
  const limit = Math.min(Math.max(1, page.limit), REFUSALS_PAGE_MAX);
  const query = db('refusals').where({ connection_id: connectionId });
  if (page.before !== undefined) query.andWhere('id', '<', page.before);
  if (page.rule !== undefined) query.andWhereRaw('violations @> ?::jsonb', [JSON.stringify([{ rule: page.rule }])]);
  // strpos rather than LIKE: the text's % and _ are literal. A connection keeps REFUSALS_KEPT rows, so the scan is short.
  if (page.text !== undefined) {
    query.andWhereRaw('(strpos(lower(message_id), lower(?)) > 0 OR strpos(lower(correlation_id), lower(?)) > 0)', [page.text, page.text]);
  }
  const rows = await query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .select('id', 'mode', 'message_id', 'message_type', 'correlation_id', 'status', 'violations', 'violations_omitted', 'refused_at');
  const counter = await db('refusal_counters').where({ connection_id: connectionId }).first('rate_limited', 'quota_exceeded', 'last_refused_at');
  const refusals: RecentRefusals['refusals'] = [];
  let bytes = 0;
  let more = rows.length > limit;
  for (const r of rows.slice(0, limit)) {
    const refusal = {
      id: Number(r.id),
      mode: r.mode,
      message_id: r.message_id,
      message_type: r.message_type,
      correlation_id: r.correlation_id,
      status: r.status,
      violations: r.violations,
      violations_omitted: r.violations_omitted,
      refused_at: r.refused_at.toISOString(),
    };
    bytes += Buffer.byteLength(JSON.stringify(refusal)) + 1;
    if (bytes > REFUSALS_PAGE_BYTES && refusals.length > 0) {
      more = true;
      break;
    }
    refusals.push(refusal);
  }
  const last = refusals.at(-1);
  return {
    connection_id: connectionId,
    refusals,
    next_before: more && last ? last.id : null,
    rate_limited: {
      rate_limited: Number(counter?.rate_limited ?? 0),
      quota_exceeded: Number(counter?.quota_exceeded ?? 0),
      last_refused_at: counter ? counter.last_refused_at.toISOString() : null,
    },
  };
}

/**
 * The newest accepted message of each of these correlation ids in the workspace (by accepted_at): a
 * refused message has no trace, but its story's accepted messages do. Read through accepted_messages'
 * story index; ids with no accepted message are absent from the answer.
 */
export async function readStoryHeads(db: Knex, workspaceId: string, correlationIds: readonly string[]): Promise<Map<string, string>> {
  if (correlationIds.length === 0) return new Map();
  const rows = await db('accepted_messages')
    .distinctOn('correlation_id')
    .where({ workspace_id: workspaceId })
    .whereIn('correlation_id', [...new Set(correlationIds)])
    .orderBy([{ column: 'correlation_id' }, { column: 'accepted_at', order: 'desc' }])
    .select('correlation_id', 'message_id');
  return new Map(rows.map((r) => [r.correlation_id, r.message_id]));
}
