import { NAMED_LEASES_LOCKED } from './named-leases-locked';
import { statement } from './statement';

/**
 * ChangeMessageVisibility: each current lease ends `:visibilityMs` from now, its handle kept. Only the
 * lease's own row changes: its story stays blocked while its head is leased, so no later message of it
 * comes out earlier.
 */
export const EXTEND = statement(
  'extend',
  `WITH ${NAMED_LEASES_LOCKED}
       UPDATE deliveries d SET visible_at = now() + (:visibilityMs * interval '1 millisecond')
         FROM named n
        WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = :consumerId AND d.lease_generation = n.generation AND d.state = 'leased'
       RETURNING d.id, n.generation`,
);
