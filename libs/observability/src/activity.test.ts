import { createActivityRecorder, MAX_RULES_PER_CELL, ACTIVITY_OTHER_RULE, type ActivityRow } from './activity';
import { eventually } from '@bus/testing';
import { createLogger } from './logger';
import { createMetricsRegistry } from './metrics';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function recorder(opts: { write?: (rows: readonly ActivityRow[]) => Promise<void>; maxCells?: number } = {}) {
  let now = T0 + 5_000;
  const written: ActivityRow[][] = [];
  const warnings: string[] = [];
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  const logger = createLogger({ service: 'test', level: 'warn', destination: { write: (line: string) => void warnings.push(line) } });
  const activity = createActivityRecorder({
    write:
      opts.write ??
      (async (rows) => {
        written.push([...rows]);
      }),
    logger,
    metrics,
    now: () => now,
    ...(opts.maxCells === undefined ? {} : { maxCells: opts.maxCells }),
  });
  const outcomes = async () =>
    Object.fromEntries(((await metrics.getSingleMetric('bus_activity_flushes_total')?.get())?.values ?? []).map((v) => [String(v.labels.outcome), v.value]));
  return { activity, written, warnings, outcomes, advance: (ms: number) => void (now += ms) };
}

describe('the activity recorder', () => {
  it('hands one write per flush with each connection-minute counted, and nothing when nothing was counted', async () => {
    const { activity, written, advance } = recorder();
    activity.published('p1');
    activity.published('p1');
    activity.refused('p1', 'schema.invalid');
    activity.refused('p1', 'schema.invalid');
    activity.refused('p1', 'sequence.out_of_order');
    activity.delivered(['c1', 'c2', 'c1']);
    activity.acked('c1', 2);
    activity.acked('c2', 0);
    activity.queueSample('c1', 7, 3.5);
    activity.queueSample('c1', 5, 4.5);
    advance(MINUTE);
    activity.published('p1');
    await activity.flush();
    await activity.flush();

    expect(written).toHaveLength(1);
    const rows = written[0]!;
    const at = (minute: number, connectionId: string) => rows.find((r) => r.minute.getTime() === minute && r.connectionId === connectionId);
    expect(at(T0, 'p1')).toEqual({
      minute: new Date(T0),
      connectionId: 'p1',
      published: 2,
      refused: { 'schema.invalid': 2, 'sequence.out_of_order': 1 },
      delivered: 0,
      acked: 0,
      queueDepth: null,
      oldestAgeSeconds: null,
    });
    expect(at(T0, 'c1')).toMatchObject({ delivered: 2, acked: 2, queueDepth: 5, oldestAgeSeconds: 4.5 });
    expect(at(T0, 'c2')).toMatchObject({ delivered: 1, acked: 0, queueDepth: null });
    expect(at(T0 + MINUTE, 'p1')).toMatchObject({ published: 1 });
    expect(rows).toHaveLength(4);
  });

  it('keeps a bounded number of connection-minutes and rules between flushes', async () => {
    const { activity, written, outcomes } = recorder({ maxCells: 3 });
    for (let i = 0; i < 10; i += 1) activity.published(`p${i}`);
    for (let i = 0; i < MAX_RULES_PER_CELL + 10; i += 1) activity.refused('p0', `rule.${i}`);
    activity.refused('p0', 'x'.repeat(500));
    await activity.flush();

    expect(written[0]!.map((r) => r.connectionId).sort()).toEqual(['p0', 'p1', 'p2']);
    const refused = written[0]!.find((r) => r.connectionId === 'p0')!.refused;
    expect(Object.keys(refused)).toHaveLength(MAX_RULES_PER_CELL);
    expect(refused[ACTIVITY_OTHER_RULE]).toBe(12);
    expect((await outcomes()).dropped_full).toBe(7);
  });

  it('drops the counts of a failed write (logged and counted) and never throws to the counting side', async () => {
    let fail = true;
    const seen: ActivityRow[][] = [];
    const { activity, warnings, outcomes } = recorder({
      write: async (rows) => {
        if (fail) throw new Error('connection refused');
        seen.push([...rows]);
      },
    });
    activity.published('p1');
    await expect(activity.flush()).resolves.toBeUndefined();
    expect(warnings.join('\n')).toMatch(/activity counts could not be written/);
    expect(warnings.join('\n')).toMatch(/connection refused/);

    fail = false;
    activity.published('p1');
    await activity.flush();
    expect(seen).toEqual([[expect.objectContaining({ connectionId: 'p1', published: 1 })]]);
    expect(await outcomes()).toMatchObject({ failed: 1, written: 1 });
  });

  it('keeps counting while a slow write runs, and writes those counts next', async () => {
    let release!: () => void;
    let started!: () => void;
    const writing = new Promise<void>((resolve) => (started = resolve));
    const seen: ActivityRow[][] = [];
    const { activity } = recorder({
      write: (rows) => {
        seen.push([...rows]);
        if (seen.length > 1) return Promise.resolve();
        started();
        return new Promise<void>((resolve) => (release = resolve));
      },
    });
    activity.published('p1');
    const first = activity.flush();
    await writing;
    activity.published('p1');
    activity.published('p1');
    const second = activity.flush();
    release();
    await Promise.all([first, second]);
    expect(seen.map((rows) => rows[0]!.published)).toEqual([1, 2]);
  });

  it('writes on its timer, again and again', async () => {
    const written: ActivityRow[][] = [];
    const activity = createActivityRecorder({
      write: async (rows) => void written.push([...rows]),
      logger: createLogger({ service: 'test', level: 'warn' }),
      metrics: createMetricsRegistry({ defaultMetrics: false }),
      intervalMs: 5,
    });
    activity.start();
    try {
      for (const round of [1, 2, 3]) {
        activity.published('p1');
        await eventually(
          async () => written.length,
          (n) => n === round,
          { what: `write ${round}` },
        );
      }
    } finally {
      await activity.stop();
    }
  });

  it('writes what is still counted when stopped', async () => {
    const { activity, written } = recorder();
    activity.start();
    activity.acked('c1', 3);
    await activity.stop();
    expect(written).toEqual([[expect.objectContaining({ connectionId: 'c1', acked: 3 })]]);
  });
});
