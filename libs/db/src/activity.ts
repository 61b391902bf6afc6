import type { Knex } from 'knex';
import { arrayParameter } from './array-parameter';
import { rawQuery } from './database';
import type { ActivityRow } from '@bus/observability';

/** The minutes the activity store keeps (24 hours); older ones are pruned by every write. */
export const ACTIVITY_WINDOW_MINUTES = 1_440;

/**
 * Adds a flush's counts to the store in one statement: each row joins its connection for the
 * workspace (a connection removed meanwhile takes its counts with it), adds to the minute's row where
 * another process already wrote it (refusals summed per rule; the last queue sample kept), and the
 * minutes past ACTIVITY_WINDOW_MINUTES are deleted on the way, so the table never holds more than the
 * window's minutes of each connection.
 */
export async function writeActivity(db: Knex, rows: readonly ActivityRow[]): Promise<void> {
  if (rows.length === 0) return;
  await rawQuery(
    db,
    `WITH pruned AS (
       DELETE FROM activity_minutes WHERE minute < now() - make_interval(mins => :window)
     ),
     counted AS (
       SELECT * FROM unnest(:connectionIds::text[], :minutes::timestamptz[], :published::int8[], :refused::jsonb[], :delivered::int8[],
                            :acked::int8[], :depths::int8[], :ages::float8[])
                AS r(connection_id, minute, published, refused, delivered, acked, queue_depth, oldest_age_seconds)
     )
     INSERT INTO activity_minutes AS a (connection_id, minute, workspace_id, published, refused, delivered, acked, queue_depth, oldest_age_seconds)
     SELECT r.connection_id, r.minute, c.workspace_id, r.published, r.refused, r.delivered, r.acked, r.queue_depth, r.oldest_age_seconds
       FROM counted r JOIN connections c ON c.id = r.connection_id
      WHERE r.minute >= now() - make_interval(mins => :window)
     ON CONFLICT (connection_id, minute) DO UPDATE
        SET published = a.published + EXCLUDED.published,
            delivered = a.delivered + EXCLUDED.delivered,
            acked = a.acked + EXCLUDED.acked,
            refused = CASE WHEN EXCLUDED.refused = '{}'::jsonb THEN a.refused ELSE (
              SELECT jsonb_object_agg(k, n) FROM (
                SELECT key AS k, sum(value::int8) AS n
                  FROM (SELECT * FROM jsonb_each_text(a.refused) UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED.refused)) e
                 GROUP BY key) t) END,
            queue_depth = COALESCE(EXCLUDED.queue_depth, a.queue_depth),
            oldest_age_seconds = COALESCE(EXCLUDED.oldest_age_seconds, a.oldest_age_seconds)`,
    {
      window: ACTIVITY_WINDOW_MINUTES,
      connectionIds: arrayParameter(rows.map((r) => r.connectionId)),
      minutes: arrayParameter(rows.map((r) => r.minute.toISOString())),
      published: arrayParameter(rows.map((r) => r.published)),
      refused: arrayParameter(rows.map((r) => JSON.stringify(r.refused))),
      delivered: arrayParameter(rows.map((r) => r.delivered)),
      acked: arrayParameter(rows.map((r) => r.acked)),
      depths: arrayParameter(rows.map((r) => r.queueDepth)),
      ages: arrayParameter(rows.map((r) => r.oldestAgeSeconds)),
    },
  );
}

/** One minute of a workspace's or a connection's activity (portal.json ActivityMinute). */
export interface ActivityPoint {
  minute: string;
  published: number;
  delivered: number;
  acked: number;
  /** Refusals by rule id; rules with none are left out. */
  refused: Record<string, number>;
  /** The minute's last sample (a workspace: the sum over its consumer connections); null without one. */
  queue_depth: number | null;
  /** The minute's last sample (a workspace: the oldest of its consumer connections); null without one. */
  oldest_age_seconds: number | null;
}

/** The answer of the portal's activity routes (portal.json Activity): every minute of the span, oldest first. */
export interface Activity {
  minutes: number;
  from: string;
  to: string;
  points: ActivityPoint[];
  /** Every rule id that refused in the span, sorted. */
  rules: string[];
}

interface MinuteRow {
  minute: Date;
  published: string;
  delivered: string;
  acked: string;
  refused: Array<Record<string, number | string>> | null;
  queue_depth: string | null;
  oldest_age_seconds: number | null;
}

/**
 * The last `minutes` minutes (the current one included) of a workspace's or one connection's
 * activity, one point per minute, zeros where nothing was counted: at most ACTIVITY_WINDOW_MINUTES
 * points, however many connections the workspace has.
 */
export async function readActivity(
  db: Knex,
  of: { workspaceId: string } | { connectionId: string },
  minutes: number,
  now: Date = new Date(),
): Promise<Activity> {
  const span = Math.min(Math.max(1, Math.floor(minutes)), ACTIVITY_WINDOW_MINUTES);
  const last = Math.floor(now.getTime() / 60_000) * 60_000;
  const first = last - (span - 1) * 60_000;
  const [column, id] = 'workspaceId' in of ? ['workspace_id', of.workspaceId] : ['connection_id', of.connectionId];
  const { rows } = await rawQuery<MinuteRow>(
    db,
    `SELECT minute, sum(published) AS published, sum(delivered) AS delivered, sum(acked) AS acked,
            jsonb_agg(refused) FILTER (WHERE refused <> '{}'::jsonb) AS refused,
            sum(queue_depth) AS queue_depth, max(oldest_age_seconds) AS oldest_age_seconds
       FROM activity_minutes
      WHERE ${column} = :id AND minute >= :first AND minute <= :last
      GROUP BY minute`,
    { id, first: new Date(first), last: new Date(last) },
  );
  const byMinute = new Map(rows.map((r) => [r.minute.getTime(), r]));
  const rules = new Set<string>();
  const points: ActivityPoint[] = [];
  for (let at = first; at <= last; at += 60_000) {
    const r = byMinute.get(at);
    const refused: Record<string, number> = {};
    for (const part of r?.refused ?? []) {
      for (const [rule, n] of Object.entries(part)) {
        refused[rule] = (refused[rule] ?? 0) + Number(n);
        rules.add(rule);
      }
    }
    points.push({
      minute: new Date(at).toISOString(),
      published: Number(r?.published ?? 0),
      delivered: Number(r?.delivered ?? 0),
      acked: Number(r?.acked ?? 0),
      refused,
      queue_depth: r?.queue_depth == null ? null : Number(r.queue_depth),
      oldest_age_seconds: r?.oldest_age_seconds ?? null,
    });
  }
  return { minutes: span, from: new Date(first).toISOString(), to: new Date(last + 60_000).toISOString(), points, rules: [...rules].sort() };
}
