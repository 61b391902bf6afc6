/**
 * Not a statement: the CTEs `named` (each (row, generation) of a call's receipt handles once) and
 * `locked` (the named rows still leased, locked in id order) that open a statement changing leases by
 * handle. Every statement that waits for delivery rows locks them in id order (a nack: its groups'
 * rows from the first named on), so two never wait for each other: an UPDATE joined to the handles
 * locks rows in the order its plan meets them, which on a busy table is where their latest versions
 * are stored, and deadlocked with a nack (Postgres then fails one of them: a 503 to the consumer).
 */
export const NAMED_LEASES_LOCKED = `named AS (
           SELECT DISTINCT id, generation FROM unnest(:ids::bigint[], :generations::int[]) AS n(id, generation)
         ),
         locked AS MATERIALIZED (
           SELECT id FROM deliveries WHERE id = ANY(ARRAY(SELECT id FROM named)) AND state = 'leased'
            ORDER BY id FOR UPDATE
         )`;
