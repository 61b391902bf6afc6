/**
 * The retention sweep's step after removing deliveries (a CTE over `removed`, the batch's deleted
 * rows): a removed un-acked head (a message nobody acked in the window) leaves its story's next
 * un-acked delivery the head, so the story's receives go on. The sweep holds the story's lock
 * (deliveryStoryKey), as every writer of the head marker does.
 */
export const RETENTION_PROMOTE_HEAD = `promoted AS (
      UPDATE deliveries d SET is_head = true
        FROM (SELECT DISTINCT consumer_id, correlation_id FROM removed WHERE is_head) s
        CROSS JOIN LATERAL (
          SELECT id FROM deliveries x
           WHERE x.consumer_id = s.consumer_id AND x.correlation_id = s.correlation_id AND x.acked_at IS NULL AND x.id NOT IN (SELECT id FROM removed)
           ORDER BY x.id LIMIT 1
        ) n
       WHERE d.id = n.id
      RETURNING d.id
    )`;
