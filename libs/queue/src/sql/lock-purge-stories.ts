import { deliveryStoryKey } from '@bus/db';
import { statement } from './statement';

/**
 * A purge's next batch of stories, locked: the consumer's heads after `:after` up to `:mark` (the
 * delivery sequence when the purge began), oldest first, at most `:stories` — each story with an
 * un-acked delivery has exactly one head (deliveries_heads, and deliveries_dead_letter_heads for a
 * story stopped at an open dead letter, whose later messages the purge settles too), so the batch is
 * found without walking the backlog, and a story whose head is past the mark has nothing of the
 * purge's. Their story locks are taken as lock-stories.ts takes them (sorted hashed keys, each its own
 * transaction-scoped lock), so the purge statement that follows in the transaction sees every
 * committed change to them and no enqueue, ack, replay or discarded dead letter of them is in flight.
 * Batches keep the locks one transaction holds bounded whatever the number of correlation ids
 * (Postgres' lock table is shared). The consumer as a range and the order by (consumer_id, id): the
 * two heads indexes, merged (lease.ts says why). Answers the heads and their stories in id order, one
 * head a story.
 */
export const LOCK_PURGE_STORIES = statement(
  'lock-purge-stories',
  `WITH batch AS MATERIALIZED (
         SELECT id, workspace_id, correlation_id FROM (
           (SELECT id, workspace_id, correlation_id FROM deliveries
             WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND NOT dead_lettered AND id > :after AND id <= :mark
             ORDER BY consumer_id, id LIMIT :stories)
           UNION ALL
           (SELECT id, workspace_id, correlation_id FROM deliveries
             WHERE consumer_id BETWEEN :consumerId AND :consumerId AND is_head AND dead_lettered AND id > :after AND id <= :mark
             ORDER BY consumer_id, id LIMIT :stories)
         ) heads ORDER BY id LIMIT :stories
       ),
       locked AS (
         SELECT count(pg_advisory_xact_lock(k)) AS n FROM (
           SELECT DISTINCT hashtextextended(${deliveryStoryKey('workspace_id', 'correlation_id')}, 0) AS k FROM batch ORDER BY k
         ) keys
       )
       SELECT (SELECT n FROM locked) AS locked, ARRAY(SELECT id::text FROM batch ORDER BY id) AS heads,
              ARRAY(SELECT correlation_id FROM batch ORDER BY id) AS correlation_ids`,
);
