import { statement } from './statement';

/**
 * Dead letters one receive makes at most. Each receive of a connection with a receive limit runs this
 * statement first; a limit set or lowered over a queue whose heads were received before can make
 * hundreds of thousands due at once (~23 µs each here: 100,000 took 2.3 s), which in one statement
 * would pass the statement timeout at every receive. The rest wait for the next receives; none is
 * handed out meanwhile, as the receive's gate skips heads at the limit.
 */
export const DEAD_LETTERS_PER_RECEIVE = 1_000;

/**
 * The oldest DEAD_LETTERS_PER_RECEIVE free heads received `:maxReceives` times or more, locked (SKIP
 * LOCKED: a receive holding one decides first), become dead letters: queued, visible_at 'infinity', a
 * new lease generation so an old receipt handle is stale, each with its dead_letters row. A dead
 * letter stays its story's head, so the messages after it wait, but leaves deliveries_heads
 * (`dead_lettered`, migration 031), so receives no longer pass over it. The consumer as a range and
 * the order by (consumer_id, id): deliveries_heads, not the primary key (lease.ts says why).
 */
export const DEAD_LETTER_DUE = statement(
  'dead_letter_due',
  `WITH due AS MATERIALIZED (
         SELECT id FROM deliveries
          WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND NOT dead_lettered AND visible_at <= now() AND receive_count >= :maxReceives
          ORDER BY consumer_id, id LIMIT ${DEAD_LETTERS_PER_RECEIVE} FOR UPDATE SKIP LOCKED
       ),
       moved AS (
         UPDATE deliveries d SET state = 'queued', visible_at = 'infinity', dead_lettered = true, lease_generation = d.lease_generation + 1
           FROM due WHERE d.id = due.id
         RETURNING d.id, d.consumer_id, d.message_id, d.correlation_id, d.receive_count
       )
       INSERT INTO dead_letters (consumer_id, delivery_id, message_id, correlation_id, receive_count)
       SELECT consumer_id, id, message_id, correlation_id, receive_count FROM moved`,
);
