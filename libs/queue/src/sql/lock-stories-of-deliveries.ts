import { deliveryStoryKey } from '@bus/db';

/**
 * The story locks of an ack or a discarded dead letter: as lock-stories.ts, for the stories of the
 * consumer's deliveries named by id. `ids` and `consumer` are SQL expressions: parameters
 * (`:ids::bigint[]`, `:consumerId`) or, for the ack's simple query, quoted literals.
 */
export function lockStoriesOfDeliveries(consumer: string, ids: string): string {
  return `SELECT count(pg_advisory_xact_lock(k)) AS locked FROM (
       SELECT DISTINCT hashtextextended(${deliveryStoryKey('workspace_id', 'correlation_id')}, 0) AS k FROM deliveries
        WHERE id = ANY(${ids}) AND consumer_id = ${consumer} ORDER BY k
     ) keys`;
}
