import { NAMED_LEASES_LOCKED } from './named-leases-locked';
import { statement } from './statement';

/** The Sandbox's faults of one receive's answer: cuts the leases still current and records both kinds of events. */
export const RECEIVE_FAULTS = statement(
  'receive_faults',
  `WITH ${NAMED_LEASES_LOCKED},
       cut AS (
         UPDATE deliveries d SET visible_at = now() + (:leaseMs * interval '1 millisecond')
           FROM named n
          WHERE d.id = n.id AND d.id IN (SELECT id FROM locked) AND d.consumer_id = :consumerId AND d.lease_generation = n.generation AND d.state = 'leased'
         RETURNING d.id, d.message_id
       )
       INSERT INTO consumer_fault_events (consumer_id, delivery_id, message_id, kind, detail_ms)
       SELECT :consumerId::text, id, message_id, 'early_expiry', :leaseMs::int FROM cut
       UNION ALL
       SELECT :consumerId::text, d.id, d.message_id, 'delay', :delayMs::int FROM deliveries d WHERE d.id = ANY(:delayed::bigint[]) AND d.consumer_id = :consumerId
       RETURNING kind`,
);
