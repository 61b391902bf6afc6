import type { ReceiveGate } from '../queue-store';

/**
 * Not a statement: the query the lease (lease.ts) runs when it finds no free head — when the
 * consumer's next head becomes visible on a timer (a nack's delay, a lease's end, the gate's delay), the
 * time an empty long poll waits for. Only a head's time counts, since a later row is receivable only
 * once it is its story's head. A dead letter's visible_at is 'infinity': no time to wait for (and it is
 * not in deliveries_heads). Carried by the lease rather than sent after it, so an empty receive is one
 * round trip and one prepared statement, not two.
 */
export function nextVisibleQuery(gate: ReceiveGate | undefined): string {
  const visibleAt = gate && gate.delayMs > 0 ? `greatest(visible_at, enqueued_at + (:delayMs * interval '1 millisecond'))` : 'visible_at';
  return `SELECT min(${visibleAt}) FROM deliveries
            WHERE consumer_id = :consumerId AND is_head AND NOT dead_lettered AND visible_at < 'infinity' AND ${visibleAt} > now()`;
}
