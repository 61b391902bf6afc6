import type { ReceiveGate } from '../queue-store';
import { gateConditions, gateName } from './gate';
import { nextVisibleQuery } from './next-visible';
import { statement, type Statement } from './statement';

/**
 * The receive: one statement (one round trip, its own transaction, prepared). The candidates are the
 * oldest free heads, read from deliveries_heads (each story's head marked, migration 020; open dead
 * letters in an index of their own, migration 031) oldest first, passing over the held ones (leased,
 * delayed, held back by the gate): a receive reads the held heads before the first free ones and
 * `candidates` more, whatever the number of correlation ids. The candidates' query names the consumer
 * as a range and orders by (consumer_id, id), an order only deliveries_heads gives: by `consumer_id =`
 * and `ORDER BY id` the planner walked the primary key from the oldest row, filtering on is_head
 * (EXPLAIN on bench:growth's queue), which on a table keeping its acked rows for the queue window
 * reads every one of them. From the snapshot their runs tell how many heads fill `max` × `callers`:
 * only that many are locked, in id order with SKIP LOCKED, so concurrent receivers take the next free
 * heads instead of each other's (the WHERE, `is_head` with it, is re-checked on the locked row
 * version, so a head leased or acked meanwhile drops out). After each locked head the run of its
 * story, cut at the first row another transaction holds or whose lease still runs, so a run never has
 * a gap and never takes a row leased to someone else (a replay can queue again a story's acked row
 * older than a leased one, and that row becomes the head). The runs are dealt to the `callers`
 * receives head by head, each answer filled up to `max` and the next starting at the next head, so a
 * run is never split between two answers. With nothing leased, one row of NULLs says whether heads
 * were found (contended) and, when none was, when the next one becomes visible (next-visible.ts: its
 * subquery runs only then). The first receive's time stays on the row for a test run's publish→receive.
 */
export function leaseStatement(gate: ReceiveGate | undefined): Statement {
  const gated = gateConditions(gate);
  return statement(
    `lease${gateName(gate)}`,
    `WITH RECURSIVE candidates AS MATERIALIZED (
         SELECT id, correlation_id FROM deliveries
          WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND NOT dead_lettered AND visible_at <= now()${gated}
          ORDER BY consumer_id, id LIMIT :candidates
       ),
       -- How many heads to lock: the candidates' runs (by this snapshot) counted head after head, oldest
       -- first, until they fill max × callers rows — a probe per head counted, not per candidate.
       numbered AS MATERIALIZED (
         SELECT id, correlation_id, row_number() OVER (ORDER BY id) AS n FROM candidates
       ),
       sized (n, rows_so_far) AS (
         SELECT 0::bigint, 0::bigint
         UNION ALL
         SELECT c.n, s.rows_so_far + 1 + (
                  SELECT count(*) FROM (
                    SELECT 1 FROM deliveries
                     WHERE consumer_id = :consumerId AND correlation_id = c.correlation_id AND id > c.id AND acked_at IS NULL
                     ORDER BY id LIMIT :max - 1
                  ) run)
           FROM sized s JOIN numbered c ON c.n = s.n + 1
          WHERE s.rows_so_far < :max * :callers
       ),
       locked_heads AS MATERIALIZED (
         SELECT id, correlation_id FROM deliveries
          WHERE id = ANY(ARRAY(SELECT id FROM candidates)) AND state <> 'acked' AND is_head AND visible_at <= now()${gated}
          ORDER BY id LIMIT (SELECT count(*) - 1 FROM sized) FOR UPDATE SKIP LOCKED
       ),
       following AS MATERIALIZED (
         SELECT h.id AS head_id, f.id, f.rank
           FROM locked_heads h
          CROSS JOIN LATERAL (
            SELECT id, row_number() OVER (ORDER BY id) AS rank FROM deliveries
             WHERE consumer_id = :consumerId AND correlation_id = h.correlation_id AND id > h.id AND acked_at IS NULL
             ORDER BY id LIMIT :max - 1
          ) f
       ),
       following_locked AS MATERIALIZED (
         SELECT id FROM deliveries
          WHERE id = ANY(ARRAY(SELECT id FROM following)) AND state <> 'acked' AND visible_at <= now()${gated}
          ORDER BY id FOR UPDATE SKIP LOCKED
       ),
       runs AS (
         SELECT f.head_id, f.id, f.rank, count(l.id) OVER (PARTITION BY f.head_id ORDER BY f.rank) AS locked_so_far
           FROM following f LEFT JOIN following_locked l ON l.id = f.id
       ),
       locked_runs AS (
         SELECT id AS head_id, id, 0 AS rank FROM locked_heads
         UNION ALL
         SELECT head_id, id, rank FROM runs WHERE locked_so_far = rank
       ),
       run_lengths AS (
         SELECT head_id, count(*) AS length, row_number() OVER (ORDER BY head_id) AS n FROM locked_runs GROUP BY head_id
       ),
       -- The runs dealt in head order: a run goes to the current answer (cut at max) while it has room,
       -- else it starts the next answer; dealt = how many of the run's rows (the head's among them) go.
       dealt (n, head_id, answer, used, dealt) AS (
         SELECT n, head_id, 1, least(length, :max), least(length, :max) FROM run_lengths WHERE n = 1
         UNION ALL
         SELECT r.n, r.head_id, d.answer + CASE WHEN d.used >= :max THEN 1 ELSE 0 END,
                CASE WHEN d.used >= :max THEN least(r.length, :max) ELSE d.used + least(r.length, :max - d.used) END,
                CASE WHEN d.used >= :max THEN least(r.length, :max) ELSE least(r.length, :max - d.used) END
           FROM dealt d JOIN run_lengths r ON r.n = d.n + 1
       ),
       take AS (
         SELECT l.id, d.answer, row_number() OVER (ORDER BY l.head_id, l.id) AS position
           FROM locked_runs l JOIN dealt d ON d.head_id = l.head_id
          WHERE d.answer <= :callers AND l.rank < d.dealt
       ),
       leased AS (
         UPDATE deliveries d
            SET state = 'leased', visible_at = now() + (:visibilityMs * interval '1 millisecond'),
                lease_generation = d.lease_generation + 1, receive_count = d.receive_count + 1,
                first_received_at = coalesce(d.first_received_at, now())
           FROM messages m
          WHERE d.id IN (SELECT id FROM take) AND m.workspace_id = d.workspace_id AND m.message_id = d.message_id
         RETURNING d.id, d.lease_generation, d.message_id, d.correlation_id, d.receive_count, m.message_type, m.published_at, m.body, m.traceparent
       )
       SELECT found.heads, found.next_visible_at, take.answer, leased.*
         FROM (SELECT count(*)::int AS heads,
                      CASE WHEN count(*) = 0 THEN (${nextVisibleQuery(gate)}) END AS next_visible_at
                 FROM candidates) found
         LEFT JOIN (leased JOIN take USING (id)) ON true
        ORDER BY take.position`,
  );
}
