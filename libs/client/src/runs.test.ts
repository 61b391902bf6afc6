import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { runReportFiles, runTestReport, type RunReport } from './runs';

const report: RunReport = {
  run: {
    id: '0b8e2b9a-7f55-4c43-9a5e-2f2d0c0c6a11',
    label: 'nightly <ci>',
    workspace_id: 'w1',
    opened_by: 'caaaaaaaaaaaa',
    started_at: '2026-11-29T06:00:00.000Z',
    ends_at: '2026-11-29T06:10:00.000Z',
    stopped_at: '2026-11-29T06:10:00.000Z',
    state: 'ended',
  },
  window: { from: '2026-11-29T06:00:00.000Z', to: '2026-11-29T06:10:00.000Z' },
  messages: [
    {
      at: '2026-11-29T06:01:00.000Z',
      mode: 'publish',
      outcome: 'accepted',
      message_id: 'm-1',
      message_type: 'telling.started',
      correlation_id: 'c-1',
      connection_id: 'cbbbbbbbbbbbb',
      status: 202,
      violations: [],
      violations_omitted: 0,
    },
    {
      at: '2026-11-29T06:02:00.000Z',
      mode: 'validate',
      outcome: 'refused',
      message_id: null,
      message_type: null,
      correlation_id: null,
      connection_id: 'cbbbbbbbbbbbb',
      status: 400,
      violations: [{ source: 'schema', rule: 'schema.required', message: 'must have occurred_at', path: '' }],
      violations_omitted: 7,
    },
  ],
  truncated: false,
  messages_max: 500,
  totals: { accepted: 1, refused: 1 },
  by_message_type: [],
  by_rule: [],
  consumers: [],
};

describe('runTestReport', () => {
  it('is a case per message: its type as suite, a refusal failed with its status, first rule and every stored violation', () => {
    const cases = runTestReport(report);
    expect(cases).toMatchObject({ tool: 'bus test run nightly <ci>', startedAt: new Date(report.window.from), stoppedAt: new Date(report.window.to) });
    expect(cases.cases).toEqual([
      { name: 'publish m-1 at 2026-11-29T06:01:00.000Z', suite: 'telling.started', durationMs: 0, outcome: 'passed' },
      {
        name: 'validate (no message_id) at 2026-11-29T06:02:00.000Z',
        suite: 'unknown',
        durationMs: 0,
        outcome: 'failed',
        message: '400 schema.required',
        details: 'schema.required: must have occurred_at\n… and 7 more',
      },
    ]);
  });

  it('writes JUnit a JUnit parser reads and CTRF that passes its schema', async () => {
    const files = runReportFiles(report);
    expect(await parseJunit(files.junit)).toMatchObject({ name: 'bus test run nightly <ci>', tests: 2, failures: 1 });
    expect(validateCtrf(JSON.parse(files.ctrf))).toMatchObject({ valid: true });
  });
});
