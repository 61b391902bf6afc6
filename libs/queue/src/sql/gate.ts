import type { ReceiveGate } from '../queue-store';

/**
 * Not a statement: the conditions a consumer connection's testing settings (docs/testing-tools.md)
 * add to "receivable", over a delivery's unqualified columns; '' without a gate, so the plain
 * statements are exactly the plain text.
 */
export function gateConditions(gate: ReceiveGate | undefined): string {
  if (!gate) return '';
  return [
    gate.receiveLimit === null ? '' : ` AND receive_count < :receiveLimit`,
    gate.delayMs > 0 ? ` AND enqueued_at <= now() - (:delayMs * interval '1 millisecond')` : '',
  ].join('');
}

/** The gate's variant of a prepared statement's name: each variant is its own text. */
export function gateName(gate: ReceiveGate | undefined): string {
  if (!gate) return '';
  return `${gate.receiveLimit === null ? '' : '.limited'}${gate.delayMs > 0 ? '.delayed' : ''}`;
}

/** The gate's bindings (none without one). */
export function gateBindings(gate: ReceiveGate | undefined): Record<string, number> {
  return gate ? { receiveLimit: gate.receiveLimit ?? 0, delayMs: gate.delayMs } : {};
}
