import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { throttledWarning } from './throttled-warning';

describe('throttledWarning', () => {
  it('writes the first warning at once, then one per 10 s with the count of those it did not write', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      service: 'test',
      level: 'info',
      destination: new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }),
    });
    let clock = 0;
    const warn = throttledWarning(logger, 'it keeps failing', { now: () => clock });
    // Raised once a second for 25 s.
    for (; clock <= 25_000; clock += 1_000) warn({ attempt: clock / 1_000 });
    expect(lines.map(({ level, msg, attempt, suppressed }) => ({ level, msg, attempt, suppressed }))).toEqual([
      { level: 'warn', msg: 'it keeps failing', attempt: 0, suppressed: 0 },
      { level: 'warn', msg: 'it keeps failing', attempt: 10, suppressed: 9 },
      { level: 'warn', msg: 'it keeps failing', attempt: 20, suppressed: 9 },
    ]);
  });
});
