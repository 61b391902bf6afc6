import { deliveryStoryKey } from '@bus/db';

/**
 * The story locks of an enqueue or a replay: a transaction-scoped advisory lock per (workspace,
 * correlation id) of `:workspaceIds` × `:correlationIds` (paired), on the key the retention sweep also
 * tries (libs/db deliveryStoryKey), taken in the order of their hashed keys, so two writers never wait
 * for each other in a cycle (story-lock.ts says why every write deciding a head takes them first, in a
 * statement of its own).
 */
export const LOCK_STORIES = `SELECT count(pg_advisory_xact_lock(k)) AS locked FROM (
       SELECT DISTINCT hashtextextended(${deliveryStoryKey('w', 'c')}, 0) AS k
         FROM unnest(:workspaceIds::text[], :correlationIds::text[]) AS s(w, c) ORDER BY k
     ) keys`;
