import { boundedSendSettings } from './clients';

describe('boundedSendSettings: a send that gives up within its deadline', () => {
  it.each([100, 500, 1_000, 2_000, 5_000, 10_000, 20_000])(
    'fits every retry into %i ms against a broker that is down, and cuts a request at it',
    (deadlineMs) => {
      const settings = boundedSendSettings(deadlineMs);
      expect(settings.worstCaseUnreachableMs).toBeLessThanOrEqual(deadlineMs);
      expect(settings.requestTimeout).toBeLessThanOrEqual(deadlineMs);
      expect(settings.connectionTimeout).toBeLessThanOrEqual(deadlineMs);
      // The client itself never retries (each retry would restart the whole budget): the send's retrier does.
      expect(settings.clientRetry).toEqual({ retries: 0 });
    },
  );

  it('still retries a send a few times with the gateway default of 5 s (a leader moving is not an outage)', () => {
    expect(boundedSendSettings(5_000)).toMatchObject({
      connectionTimeout: 500,
      requestTimeout: 5_000,
      producerRetry: { retries: 4, maxRetryTime: 1_000 },
      worstCaseUnreachableMs: 4_600,
    });
  });
});
