import { loadConfig } from '@bus/config';
import { defaultDeliveryGroupId, deliveryConfig } from './config';

describe('delivery config', () => {
  it('defaults the group to one per database, the acceptance wait to 15 s (three publish commit timeouts) and the quarantine re-check to 30 s', () => {
    expect(loadConfig(deliveryConfig, {})).toEqual({
      DELIVERY_GROUP_ID: undefined,
      DELIVERY_ACCEPTANCE_WAIT: 15_000,
      DELIVERY_QUARANTINE_RECHECK: 30_000,
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
});
