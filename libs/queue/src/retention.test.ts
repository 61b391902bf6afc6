import { ConfigError, loadConfig } from '@bus/config';
import { RETENTION_TABLES, RETENTION_WINDOWS, retentionConfig, retentionSettings } from './retention';

const DAY = 86_400_000;
const settingsOf = (env: Record<string, string>, archiveMs = 30 * DAY) =>
  retentionSettings({ ...loadConfig(retentionConfig, env), KAFKA_MESSAGES_RETENTION: archiveMs });

describe('retention windows', () => {
  it('default to the replay archive for idempotency records and story state, 14 days for queues, 7 for quarantine, 30 for replay jobs', () => {
    expect(settingsOf({})).toEqual({
      windows: {
        IDEMPOTENCY_RETENTION: 30 * DAY,
        QUEUE_RETENTION: 14 * DAY,
        QUARANTINE_RETENTION: 7 * DAY,
        REPLAY_JOB_RETENTION: 30 * DAY,
        REFUSAL_RETENTION: 7 * DAY,
        AUDIT_RETENTION: 400 * DAY,
        PORTAL_SESSION_RETENTION: DAY,
      },
      intervalMs: 60_000,
      batchSize: 1_000,
    });
    // Preview's 7-day archive; an archive shorter than the spec's 7 days never shortens the window.
    expect(settingsOf({}, 7 * DAY).windows.IDEMPOTENCY_RETENTION).toBe(7 * DAY);
    expect(settingsOf({}, DAY).windows.IDEMPOTENCY_RETENTION).toBe(7 * DAY);
    expect(settingsOf({ IDEMPOTENCY_RETENTION: '45d', QUARANTINE_RETENTION: '2d' }).windows).toMatchObject({
      IDEMPOTENCY_RETENTION: 45 * DAY,
      QUARANTINE_RETENTION: 2 * DAY,
    });
  });

  it('refuses a window below its minimum (the spec’s 7 days for idempotency, 14 days for queues), naming the variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(retentionConfig, env);
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
      return [];
    };
    expect(problems({ IDEMPOTENCY_RETENTION: '6d', QUEUE_RETENTION: '13d', QUARANTINE_RETENTION: '12h', REPLAY_JOB_RETENTION: 'forever' })).toEqual([
      { variable: 'IDEMPOTENCY_RETENTION', problem: 'must be at least 7d, got "6d"' },
      { variable: 'QUEUE_RETENTION', problem: 'must be at least 14d, got "13d"' },
      { variable: 'QUARANTINE_RETENTION', problem: 'must be at least 1d, got "12h"' },
      { variable: 'REPLAY_JOB_RETENTION', problem: expect.stringContaining('must be a duration like') },
    ]);
    expect(problems({ RETENTION_SWEEP_BATCH: '0' })).toEqual([{ variable: 'RETENTION_SWEEP_BATCH', problem: expect.stringContaining('from 1 to 10000') }]);
  });

  it('has one variable per window, and tables sharing a window share it whole', () => {
    const variables = RETENTION_WINDOWS.map((w) => w.variable);
    expect(new Set(variables).size).toBe(variables.length);
    for (const entry of RETENTION_TABLES) expect(RETENTION_WINDOWS).toContain(entry.window);
    expect(new Set(RETENTION_TABLES.map((e) => e.table)).size).toBe(RETENTION_TABLES.length);
    // Deliveries are swept before the stored messages they hold on to.
    const order = RETENTION_TABLES.map((e) => e.table);
    expect(order.indexOf('deliveries')).toBeLessThan(order.indexOf('messages'));
  });
});
