'use strict';
// The jest environment of the tiers that start bus processes (e2e, faults, fuzz, browser): Node's, plus
// one thing. When a test fails, its report also carries what the processes the file started
// (startNodeProcess in libs/testing/src/process.ts) logged at warning level or worse while the test
// ran, so a CI log shows the bus's own account of a failure (its `err` with `cause`) next to the
// answer the test did not expect. Logs never hold secrets, tokens or message bodies (docs/observability.md).
const { TestEnvironment } = require('jest-environment-node');

/** The key under which startNodeProcess keeps the file's processes on its global (process.ts). */
const STARTED_PROCESSES_KEY = '__busStartedProcesses';
const MAX_LINES = 40;
const MAX_LINE_CHARS = 2_000;
/** The bus's loggers name their levels (libs/observability/src/logger.ts): these are warning or worse. */
const SHOWN_LEVELS = new Set(['warn', 'error', 'fatal']);

/** A log line at warning level or worse, or a line that is not a log entry (a crash's stack, a Node warning). */
function isWarningOrWorse(line) {
  if (line.trim() === '') return false;
  try {
    const entry = JSON.parse(line);
    return typeof entry?.level !== 'string' || SHOWN_LEVELS.has(entry.level);
  } catch {
    return true;
  }
}

class BusProcessesEnvironment extends TestEnvironment {
  /** How much each process had written when the running test started. */
  outputAtTestStart = new Map();

  handleTestEvent(event) {
    const processes = this.global[STARTED_PROCESSES_KEY] ?? new Set();
    if (event.name === 'test_start') {
      this.outputAtTestStart = new Map([...processes].map((p) => [p, p.output().length]));
    } else if (event.name === 'test_done' && event.test.errors.length > 0) {
      const lines = [...processes].flatMap((p) =>
        p
          .output()
          .slice(this.outputAtTestStart.get(p) ?? 0)
          .split('\n')
          .filter(isWarningOrWorse)
          .map((line) => `${p.name}: ${line.slice(0, MAX_LINE_CHARS)}`),
      );
      if (lines.length === 0) return;
      const shown = lines.slice(-MAX_LINES);
      const report = new Error(
        `What the processes this file started logged at warning level or worse during the test (${shown.length} of ${lines.length} lines):\n${shown.join('\n')}`,
      );
      // The report is the message alone: a stack would point here, not at the test.
      report.stack = report.message;
      event.test.errors.push(report);
    }
  }
}

module.exports = BusProcessesEnvironment;
