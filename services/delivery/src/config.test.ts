import { loadConfig } from '@bus/config';
import { defaultDeliveryGroupId, deliveryConfig, deliverySessionTimeout } from './config';

describe('delivery config', () => {
  it('defaults the group to one per database, the acceptance wait to 15 s (three publish commit timeouts) and the quarantine re-check to 30 s', () => {
    expect(loadConfig(deliveryConfig, {})).toEqual({
      DELIVERY_GROUP_ID: undefined,
      DELIVERY_ACCEPTANCE_WAIT: 15_000,
      DELIVERY_QUARANTINE_RECHECK: 30_000,
      DELIVERY_SESSION_TIMEOUT: undefined,
      IDEMPOTENCY_RETENTION: undefined,
      QUEUE_RETENTION: undefined,
      QUARANTINE_RETENTION: undefined,
      REPLAY_JOB_RETENTION: undefined,
      REFUSAL_RETENTION: undefined,
      RETENTION_SWEEP_INTERVAL: 60_000,
      RETENTION_SWEEP_BATCH: 1_000,
    });
    expect(defaultDeliveryGroupId('postgres://u:p@127.0.0.1:55432/bus_e2e_ab12')).toBe('bus.delivery.bus_e2e_ab12');
  });

  it('refuses a wait over 60 s and a malformed group id', () => {
    expect(() => loadConfig(deliveryConfig, { DELIVERY_ACCEPTANCE_WAIT: '2m' })).toThrow(/DELIVERY_ACCEPTANCE_WAIT/);
    expect(() => loadConfig(deliveryConfig, { DELIVERY_GROUP_ID: 'a b' })).toThrow(/DELIVERY_GROUP_ID/);
  });

  it('refuses a session timeout under 1 s or over 5 m', () => {
    expect(() => loadConfig(deliveryConfig, { DELIVERY_SESSION_TIMEOUT: '500ms' })).toThrow(/DELIVERY_SESSION_TIMEOUT/);
    expect(() => loadConfig(deliveryConfig, { DELIVERY_SESSION_TIMEOUT: '6m' })).toThrow(/DELIVERY_SESSION_TIMEOUT/);
  });

  it("asks for a 3 s session unless the broker's floor is higher, and refuses a setting below that floor", () => {
    expect(deliverySessionTimeout(undefined, 1_000)).toBe(3_000);
    expect(deliverySessionTimeout(undefined, 6_000)).toBe(6_000);
    // A broker that does not say is assumed to keep Kafka's default floor.
    expect(deliverySessionTimeout(undefined, undefined)).toBe(6_000);
    expect(deliverySessionTimeout(2_000, 1_000)).toBe(2_000);
    expect(deliverySessionTimeout(2_000, undefined)).toBe(2_000);
    expect(() => deliverySessionTimeout(3_000, 6_000)).toThrow(
      /DELIVERY_SESSION_TIMEOUT: must be at least the broker's group.min.session.timeout.ms \(6000ms\), got 3000ms/,
    );
  });
});
