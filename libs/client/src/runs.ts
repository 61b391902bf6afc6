import type { Violation } from './errors';
import { ctrfJson, junitXml, violationLine, type ReportCase, type TestReport } from './reports';
import { busRequest } from './request';
import { TokenSource, type ClientOptions } from './token';

/** A test run (docs/testing-tools.md#test-runs): a label with a start and an end in the token's workspace. */
export interface TestRun {
  id: string;
  label: string;
  workspace_id: string;
  /** The connection that opened it. */
  opened_by: string;
  started_at: string;
  /** The planned end while open, the stop's time once stopped. */
  ends_at: string;
  stopped_at: string | null;
  state: 'open' | 'ended';
}

/** One publish or validate in a run, accepted or refused. */
export interface RunMessage {
  at: string;
  mode: 'publish' | 'validate';
  outcome: 'accepted' | 'refused';
  message_id: string | null;
  message_type: string | null;
  correlation_id: string | null;
  connection_id: string;
  status: number;
  violations: Violation[];
  violations_omitted: number;
}

/** Median and max of one span over a consumer's copies, in ms. */
export interface Span {
  median_ms: number;
  max_ms: number;
}

/** GET /v1/tenants/{t}/runs/{run_id}/report (bus.json RunReport). */
export interface RunReport {
  run: TestRun;
  /** What the report covers: the run's start to its end, or to now while it is open. */
  window: { from: string; to: string };
  /** The oldest `messages_max` of the run; `truncated` when there were more (the counts cover all). */
  messages: RunMessage[];
  truncated: boolean;
  messages_max: number;
  totals: { accepted: number; refused: number };
  by_message_type: Array<{ message_type: string; accepted: number; refused: number }>;
  by_rule: Array<{ rule: string; refusals: number }>;
  consumers: Array<{ consumer_id: string; enqueued: number; received: number; acked: number; publish_to_receive: Span | null; receive_to_ack: Span | null }>;
}

/**
 * A run's report as test cases: one per message listed (suite: its message type), a refusal a failure
 * whose message is the status and first rule and whose details list its violations. The JUnit and CTRF
 * forms of GET …/report and of `busctl run report` are both written from this.
 */
export function runTestReport(report: RunReport): TestReport {
  return {
    tool: `bus test run ${report.run.label}`,
    startedAt: new Date(report.window.from),
    stoppedAt: new Date(report.window.to),
    cases: report.messages.map((m): ReportCase => {
      const details = [...m.violations.map(violationLine), ...(m.violations_omitted > 0 ? [`… and ${m.violations_omitted} more`] : [])];
      return {
        name: `${m.mode} ${m.message_id ?? '(no message_id)'} at ${m.at}`,
        suite: m.message_type ?? 'unknown',
        durationMs: 0,
        outcome: m.outcome === 'accepted' ? 'passed' : 'failed',
        ...(m.outcome === 'refused' ? { message: `${m.status} ${m.violations[0]?.rule ?? 'refused'}`, details: details.join('\n') } : {}),
      };
    }),
  };
}

/** The report's JUnit XML and CTRF JSON texts. */
export function runReportFiles(report: RunReport): { junit: string; ctrf: string } {
  const cases = runTestReport(report);
  return { junit: junitXml(cases), ctrf: `${JSON.stringify(ctrfJson(cases), null, 2)}\n` };
}

/**
 * Test runs with any connection of the workspace, producer or consumer: open one, stop it, read its
 * report (docs/testing-tools.md#test-runs).
 */
export class BusTestRuns {
  private readonly tokens: TokenSource;

  constructor(private readonly options: ClientOptions) {
    this.tokens = new TokenSource(options);
  }

  /** Opens a run now; it ends when stopped or after `durationSeconds` (default and at most a day). */
  async start(label: string, durationSeconds?: number): Promise<TestRun> {
    const body = JSON.stringify({ label, ...(durationSeconds !== undefined ? { duration_seconds: durationSeconds } : {}) });
    return (await busRequest<TestRun>(this.tokens, this.options, { method: 'POST', path: '/runs', body })).body;
  }

  async stop(runId: string): Promise<TestRun> {
    return (await busRequest<TestRun>(this.tokens, this.options, { method: 'POST', path: `/runs/${encodeURIComponent(runId)}/stop` })).body;
  }

  async get(runId: string): Promise<TestRun> {
    return (await busRequest<TestRun>(this.tokens, this.options, { method: 'GET', path: `/runs/${encodeURIComponent(runId)}` })).body;
  }

  async report(runId: string): Promise<RunReport> {
    return (await busRequest<RunReport>(this.tokens, this.options, { method: 'GET', path: `/runs/${encodeURIComponent(runId)}/report` })).body;
  }
}
