import type { ReceiveGate } from '../queue-store';
import { statement, type Statement } from './statement';

/**
 * When the consumer's next head becomes visible on a timer (a nack's delay, a lease's end, the gate's
 * delay): only a head's time counts, since a later row is receivable only once it is its story's head.
 * A dead letter's visible_at is 'infinity': no time to wait for (and it is not in deliveries_heads).
 */
export function nextVisibleStatement(gate: ReceiveGate | undefined): Statement {
  const visibleAt = gate && gate.delayMs > 0 ? `greatest(visible_at, enqueued_at + (:delayMs * interval '1 millisecond'))` : 'visible_at';
  return statement(
    `next_visible${gate && gate.delayMs > 0 ? '.delayed' : ''}`,
    `SELECT min(${visibleAt}) AS at FROM deliveries
      WHERE consumer_id = :consumerId AND is_head AND NOT dead_lettered AND visible_at < 'infinity' AND ${visibleAt} > now()`,
  );
}
