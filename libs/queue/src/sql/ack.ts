/**
 * The ack, run after lock-stories-of-deliveries in one simple query of prepared statements (one
 * implicit transaction, one round trip: libs/db preparedSimpleQuery), so its snapshot is taken once its
 * stories' locks were granted. A handle is current when its generation is the
 * row's and the row is leased (an expired lease nobody re-took still acks). The named rows, and the row
 * that may become each story's next head, are locked in id order first, so two statements naming the
 * same rows wait for each other instead of deadlocking (the next head's lock taken later, while the
 * acked rows were held, could close a cycle with a nack of the same stories). An acked head's story
 * gets its next head (the snapshot holds every un-acked row of it: no other write to the story is in
 * flight), and when that one is visible the consumer is NOTIFYed (at COMMIT), so a long
 * poll parked behind the story answers at once. The rows are found by id alone and the consumer checked
 * on the row updated: with the consumer in the lookup, generic plans made on a young table read all
 * the consumer's rows of its message index and ANDed them with the ids (200 buffers).
 */
export const ACK = `WITH named AS (
         SELECT DISTINCT id, generation FROM unnest(:ids::bigint[], :generations::int[]) AS n(id, generation)
       ),
       stories AS MATERIALIZED (
         SELECT DISTINCT correlation_id FROM deliveries WHERE id = ANY(ARRAY(SELECT id FROM named)) AND consumer_id = :consumerId
       ),
       -- The named rows and each story's first un-acked row not named: whichever becomes a story's next
       -- head is among them, so it is locked here, in id order with the rest, and not waited for later.
       locked AS MATERIALIZED (
         SELECT id, is_head FROM deliveries
          WHERE id = ANY(ARRAY(SELECT id FROM named) || ARRAY(
                  SELECT f.id FROM stories s CROSS JOIN LATERAL (
                    SELECT id FROM deliveries
                     WHERE consumer_id = :consumerId AND correlation_id = s.correlation_id AND acked_at IS NULL AND id <> ALL(ARRAY(SELECT id FROM named))
                     ORDER BY id LIMIT 1
                  ) f))
            AND state <> 'acked'
          ORDER BY id FOR UPDATE
       ),
       acked AS (
         UPDATE deliveries d SET state = 'acked', acked_at = now(), is_head = false
           FROM named n
          WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = :consumerId AND d.lease_generation = n.generation AND d.state = 'leased'
         RETURNING d.id, n.generation, d.correlation_id
       ),
       -- Each correlation id whose head was acked gets its next head: its oldest row still un-acked
       -- once these acks commit (the snapshot has them all: the stories are locked).
       promoted AS (
         UPDATE deliveries d SET is_head = true
           FROM (SELECT DISTINCT a.correlation_id FROM acked a JOIN locked l ON l.id = a.id WHERE l.is_head) g
           CROSS JOIN LATERAL (
             SELECT id FROM deliveries
              WHERE consumer_id = :consumerId AND correlation_id = g.correlation_id AND acked_at IS NULL AND id NOT IN (SELECT id FROM acked)
              ORDER BY id LIMIT 1
           ) h
          WHERE d.id = h.id
         RETURNING d.visible_at
       ),
       woken AS (SELECT pg_notify(:channel, :consumerId) WHERE EXISTS (SELECT 1 FROM promoted WHERE visible_at <= now()))
       SELECT id, generation, (SELECT count(*) FROM woken) AS woken FROM acked`;
