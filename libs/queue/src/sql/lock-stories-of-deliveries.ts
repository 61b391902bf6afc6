import { deliveryConsumerStoryKey, deliveryStoryKey } from '@bus/db';

/**
 * The story locks of one consumer's write — an ack or a discarded dead letter — for the stories of the
 * consumer's deliveries named by id: each story's lock shared, and the consumer's own lock of the story
 * (deliveryConsumerStoryKey) exclusive, all in the order of their hashed keys with every other writer's
 * (story-lock.ts). Such a write reads and changes only that consumer's rows of the story, so the acks of
 * fifty consumers of one story run side by side, while an enqueue, a replay, a purge or the retention
 * sweep (exclusive on the story's lock) still waits for them and they for it.
 */
export const LOCK_STORIES_OF_DELIVERIES = `SELECT count(CASE WHEN shared THEN pg_advisory_xact_lock_shared(k) ELSE pg_advisory_xact_lock(k) END) AS locked FROM (
       SELECT DISTINCT l.k, l.shared FROM deliveries d
        CROSS JOIN LATERAL (VALUES (hashtextextended(${deliveryStoryKey('d.workspace_id', 'd.correlation_id')}, 0), true),
                                   (hashtextextended(${deliveryConsumerStoryKey('d.workspace_id', 'd.correlation_id', 'd.consumer_id')}, 0), false)) AS l(k, shared)
        WHERE d.id = ANY(:ids::bigint[]) AND d.consumer_id = :consumerId ORDER BY l.k
     ) keys`;
