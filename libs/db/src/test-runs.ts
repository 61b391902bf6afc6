import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { rawQuery } from './database';
import { inOneSnapshot } from './snapshot';
import type { Row } from './tables';
// The routes answer the client library's types, bus.json's TestRun and RunMessage.
import type { RunMessage, TestRun } from '@bus/client';

/** A report lists at most this many messages (the oldest of the run); `truncated` says when there were more. */
export const RUN_REPORT_MESSAGES_MAX = 500;
/** A run lasts at most a day: an open run ends by itself then, so nothing is open for ever. */
export const RUN_DURATION_MAX_SECONDS = 86_400;

function runOf(row: Row<'test_runs'>, now: Date): TestRun {
  return {
    id: row.id,
    label: row.label,
    workspace_id: row.workspace_id,
    opened_by: row.opened_by,
    started_at: row.started_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    stopped_at: row.stopped_at?.toISOString() ?? null,
    state: row.ends_at > now ? 'open' : 'ended',
  };
}

export async function openTestRun(
  db: Knex,
  run: { workspaceId: string; label: string; openedBy: string; durationSeconds: number },
  now = new Date(),
): Promise<TestRun> {
  const row = {
    id: randomUUID(),
    workspace_id: run.workspaceId,
    label: run.label,
    opened_by: run.openedBy,
    started_at: now,
    ends_at: new Date(now.getTime() + Math.min(run.durationSeconds, RUN_DURATION_MAX_SECONDS) * 1000),
    stopped_at: null,
    validations_omitted: 0,
  };
  await db('test_runs').insert(row);
  return runOf(row, now);
}

export async function readTestRun(db: Knex, workspaceId: string, runId: string, now = new Date()): Promise<TestRun | null> {
  const row = await db('test_runs').where({ id: runId, workspace_id: workspaceId }).first();
  return row ? runOf(row, now) : null;
}

/** Ends an open run now; a run already ended is answered as it is (a stop is safe to resend). Null for no such run. */
export async function stopTestRun(db: Knex, workspaceId: string, runId: string, now = new Date()): Promise<TestRun | null> {
  const [stopped] = await db('test_runs')
    .where({ id: runId, workspace_id: workspaceId })
    .andWhere('ends_at', '>', now)
    .update({ ends_at: now, stopped_at: now })
    .returning('*');
  return stopped ? runOf(stopped, now) : readTestRun(db, workspaceId, runId, now);
}

/** A validate the gateway accepted while a run of its workspace was open: its identifying fields, never the body. */
export interface AcceptedValidate {
  workspaceId: string;
  connectionId: string;
  messageId: string | null;
  messageType: string | null;
  correlationId: string | null;
  validatedAt: Date;
}

/**
 * Stores each validate under the runs of its workspace open at its time, the first
 * RUN_REPORT_MESSAGES_MAX per run (what a report lists); the rest only count in validations_omitted.
 * One statement, whatever the batch holds.
 */
export async function writeRunValidations(db: Knex, validates: readonly AcceptedValidate[]): Promise<void> {
  if (validates.length === 0) return;
  const rows = validates.map((v, ord) => ({
    ord,
    workspace_id: v.workspaceId,
    connection_id: v.connectionId,
    message_id: v.messageId,
    message_type: v.messageType,
    correlation_id: v.correlationId,
    validated_at: v.validatedAt.toISOString(),
  }));
  await db.raw(
    `WITH v AS (
       SELECT * FROM jsonb_to_recordset(:rows::jsonb) AS v(ord int, workspace_id text, connection_id text, message_id text,
                                                          message_type text, correlation_id text, validated_at timestamptz)
     ), m AS (
       SELECT r.id AS run_id, v.*,
              row_number() OVER (PARTITION BY r.id ORDER BY v.ord) + (SELECT count(*) FROM run_validations s WHERE s.run_id = r.id) AS n
         FROM v JOIN test_runs r ON r.workspace_id = v.workspace_id AND r.started_at <= v.validated_at AND r.ends_at > v.validated_at
     ), kept AS (
       INSERT INTO run_validations (run_id, connection_id, message_id, message_type, correlation_id, validated_at)
       SELECT run_id, connection_id, message_id, message_type, correlation_id, validated_at FROM m WHERE n <= :max
     )
     UPDATE test_runs t SET validations_omitted = t.validations_omitted + o.omitted
       FROM (SELECT run_id, count(*)::int AS omitted FROM m WHERE n > :max GROUP BY run_id) o
      WHERE t.id = o.run_id`,
    { rows: JSON.stringify(rows), max: RUN_REPORT_MESSAGES_MAX },
  );
}

/** The ids and windows of a workspace's runs open now (the gateway caches them briefly). */
export async function readOpenRuns(db: Knex, workspaceId: string, now = new Date()): Promise<Array<{ id: string; endsAt: Date }>> {
  const rows = await db('test_runs')
    .where({ workspace_id: workspaceId })
    .andWhere('started_at', '<=', now)
    .andWhere('ends_at', '>', now)
    .select('id', 'ends_at');
  return rows.map((r: { id: string; ends_at: Date }) => ({ id: r.id, endsAt: r.ends_at }));
}

/** What the bus recorded in a run's window, before the deliveries are joined in. */
export interface RunRecords {
  messages: RunMessage[];
  truncated: boolean;
  by_message_type: Array<{ message_type: string; accepted: number; refused: number }>;
  by_rule: Array<{ rule: string; refusals: number }>;
  totals: { accepted: number; refused: number };
  /** The run's accepted messages listed, for the consumers' side of the report. */
  accepted: Array<{ messageId: string; acceptedAt: Date }>;
  /** The workspace's consumer connections that are not removed. */
  consumers: string[];
}

/**
 * The workspace's acceptances and refusals from the run's start to its end (or now, while it is open):
 * the oldest RUN_REPORT_MESSAGES_MAX listed, the counts over all of them. Duplicates (200) and rate-limit
 * refusals (429) are not recorded one by one, so they are not listed. Accepted validates are the run's
 * own (run_validations): beyond RUN_REPORT_MESSAGES_MAX of them the report says it is truncated.
 */
export function readRunRecords(db: Knex, run: TestRun, now = new Date()): Promise<RunRecords> {
  // One snapshot for the list, the counts and the rules: refusals commit about a second after their
  // answers, so a list read before one commits and counts read after would disagree.
  return inOneSnapshot(db, (tx) => readRecordsIn(tx, run, now));
}

async function readRecordsIn(db: Knex, run: TestRun, now: Date): Promise<RunRecords> {
  const from = new Date(run.started_at);
  const to = new Date(Math.min(new Date(run.ends_at).getTime(), now.getTime()));
  const window = { workspace: run.workspace_id, run: run.id, from, to, limit: RUN_REPORT_MESSAGES_MAX + 1 };
  const listed = await rawQuery<Omit<RunMessage, 'at'> & { at: Date }>(
    db,
    `(SELECT accepted_at AS at, 'publish' AS mode, 'accepted' AS outcome, message_id, message_type, correlation_id,
             producer_connection_id AS connection_id, 202 AS status, '[]'::jsonb AS violations, 0 AS violations_omitted
        FROM accepted_messages
       WHERE workspace_id = :workspace AND accepted_at >= :from AND accepted_at < :to
       ORDER BY accepted_at LIMIT :limit)
     UNION ALL
     (SELECT refused_at, mode, 'refused', message_id, message_type, correlation_id, connection_id, status, violations, violations_omitted
        FROM refusals
       WHERE workspace_id = :workspace AND refused_at >= :from AND refused_at < :to
       ORDER BY refused_at LIMIT :limit)
     UNION ALL
     (SELECT validated_at, 'validate', 'accepted', message_id, message_type, correlation_id, connection_id, 202, '[]'::jsonb, 0
        FROM run_validations
       WHERE run_id = :run AND validated_at < :to
       ORDER BY validated_at LIMIT :limit)
     ORDER BY at LIMIT :limit`,
    window,
  );
  const byType = await rawQuery<{ message_type: string; accepted: number; refused: number }>(
    db,
    `SELECT message_type, sum(accepted)::int AS accepted, sum(refused)::int AS refused FROM (
       SELECT message_type, 1 AS accepted, 0 AS refused FROM accepted_messages
        WHERE workspace_id = :workspace AND accepted_at >= :from AND accepted_at < :to
       UNION ALL
       SELECT coalesce(message_type, 'unknown'), 0, 1 FROM refusals
        WHERE workspace_id = :workspace AND refused_at >= :from AND refused_at < :to
       UNION ALL
       SELECT coalesce(message_type, 'unknown'), 1, 0 FROM run_validations
        WHERE run_id = :run AND validated_at < :to
     ) m GROUP BY message_type ORDER BY message_type`,
    window,
  );
  // A refusal counts once per rule it broke (of the violations stored with it).
  const byRule = await rawQuery<{ rule: string; refusals: number }>(
    db,
    `SELECT v.rule, count(DISTINCT r.id)::int AS refusals
       FROM refusals r CROSS JOIN LATERAL jsonb_to_recordset(r.violations) AS v(rule text)
      WHERE r.workspace_id = :workspace AND r.refused_at >= :from AND r.refused_at < :to
      GROUP BY v.rule ORDER BY refusals DESC, v.rule`,
    window,
  );
  const omitted = await db('test_runs').where({ id: run.id }).first('validations_omitted');
  // A removed connection receives nothing more; the others are at most 1,000 (docs/admin.md).
  const consumers = await db('connections')
    .where({ workspace_id: run.workspace_id, kind: 'consumer' })
    .whereNot({ status: 'removed' })
    .orderBy('id')
    .pluck('id');
  const rows = listed.rows.slice(0, RUN_REPORT_MESSAGES_MAX);
  const messages = rows.map((r) => ({ ...r, at: r.at.toISOString() }));
  const by_message_type = byType.rows;
  return {
    messages,
    truncated: listed.rows.length > RUN_REPORT_MESSAGES_MAX || (omitted?.validations_omitted ?? 0) > 0,
    by_message_type,
    by_rule: byRule.rows,
    totals: {
      accepted: by_message_type.reduce((sum, t) => sum + t.accepted, 0),
      refused: by_message_type.reduce((sum, t) => sum + t.refused, 0),
    },
    accepted: rows.filter((r) => r.mode === 'publish' && r.outcome === 'accepted').map((r) => ({ messageId: r.message_id as string, acceptedAt: r.at })),
    consumers,
  };
}
