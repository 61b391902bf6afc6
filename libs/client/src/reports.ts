/**
 * Test reports a CI system reads: JUnit XML (Jenkins, GitLab, GitHub's test reporters) and CTRF JSON
 * (the Common Test Report Format), written from one model so the two always agree. A case is one
 * message checked; a failure carries its violations. Pure: the caller writes the files.
 */
export type CaseOutcome = 'passed' | 'failed' | 'error';

export interface ReportCase {
  /** What was checked, e.g. the message file's path. */
  name: string;
  /** Groups cases: a JUnit testsuite and CTRF's `suite` (the message type, say). */
  suite: string;
  durationMs: number;
  /** failed: the bus refused it; error: it could not be checked (the bus unreachable, the file unreadable). */
  outcome: CaseOutcome;
  /** One line: the status and first rule of a refusal, or what went wrong. */
  message?: string;
  /** Every violation, one a line (`rule path: message`). */
  details?: string;
  file?: string;
}

export interface TestReport {
  /** The tool and run that produced it, e.g. "busctl validate". */
  tool: string;
  startedAt: Date;
  stoppedAt: Date;
  cases: readonly ReportCase[];
}

/** A violation as a report's detail line: `rule path: message`. */
export const violationLine = (v: { rule: string; message: string; path?: string }): string => `${v.rule}${v.path ? ` ${v.path}` : ''}: ${v.message}`;

/** CTRF's version of its format that ctrfJson writes. */
export const CTRF_SPEC_VERSION = '0.0.0';

// XML 1.0 has no way to carry these characters, escaped or not: they become U+FFFD.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function xml(text: string): string {
  return text.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function count(cases: readonly ReportCase[], outcome: CaseOutcome): number {
  return cases.filter((c) => c.outcome === outcome).length;
}

/** JUnit XML: one testsuite per suite (in order of first appearance), one testcase per case. */
export function junitXml(report: TestReport): string {
  const suites = new Map<string, ReportCase[]>();
  for (const c of report.cases) suites.set(c.suite, [...(suites.get(c.suite) ?? []), c]);
  const totalMs = report.stoppedAt.getTime() - report.startedAt.getTime();
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(report.tool)}" tests="${report.cases.length}" failures="${count(report.cases, 'failed')}" errors="${count(report.cases, 'error')}" time="${seconds(totalMs)}">`,
  ];
  for (const [suite, cases] of suites) {
    const suiteMs = cases.reduce((sum, c) => sum + c.durationMs, 0);
    lines.push(
      `  <testsuite name="${xml(suite)}" tests="${cases.length}" failures="${count(cases, 'failed')}" errors="${count(cases, 'error')}" skipped="0" time="${seconds(suiteMs)}" timestamp="${report.startedAt.toISOString().slice(0, 19)}">`,
    );
    for (const c of cases) {
      // No `file` attribute: Jenkins' schema (junit-10.xsd) has none on a testcase; the name carries the file.
      const open = `    <testcase name="${xml(c.name)}" classname="${xml(suite)}" time="${seconds(c.durationMs)}"`;
      if (c.outcome === 'passed') {
        lines.push(`${open}/>`);
        continue;
      }
      const element = c.outcome === 'failed' ? 'failure' : 'error';
      lines.push(`${open}>`, `      <${element} message="${xml(c.message ?? c.outcome)}">${xml(c.details ?? '')}</${element}>`, '    </testcase>');
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

/** CTRF JSON (results.tool, results.summary, results.tests): an error is CTRF's `other`. */
export function ctrfJson(report: TestReport): Record<string, unknown> {
  const status = (outcome: CaseOutcome) => (outcome === 'error' ? 'other' : outcome);
  return {
    reportFormat: 'CTRF',
    specVersion: CTRF_SPEC_VERSION,
    timestamp: report.stoppedAt.toISOString(),
    generatedBy: report.tool,
    results: {
      tool: { name: report.tool },
      summary: {
        tests: report.cases.length,
        passed: count(report.cases, 'passed'),
        failed: count(report.cases, 'failed'),
        skipped: 0,
        pending: 0,
        other: count(report.cases, 'error'),
        start: report.startedAt.getTime(),
        stop: report.stoppedAt.getTime(),
      },
      tests: report.cases.map((c) => ({
        name: c.name,
        status: status(c.outcome),
        duration: Math.round(c.durationMs),
        suite: [c.suite],
        ...(c.message !== undefined ? { message: c.message } : {}),
        ...(c.details !== undefined ? { trace: c.details } : {}),
        ...(c.file !== undefined ? { filePath: c.file } : {}),
      })),
    },
  };
}
