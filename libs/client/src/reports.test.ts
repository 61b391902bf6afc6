import { parse as parseCtrf, validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { ctrfJson, junitXml, type TestReport } from './reports';

const report: TestReport = {
  tool: 'suite <one>',
  startedAt: new Date('2026-11-29T06:00:00.000Z'),
  stoppedAt: new Date('2026-11-29T06:00:01.500Z'),
  cases: [
    { name: 'a.json', suite: 'story.context', durationMs: 12, outcome: 'passed', file: 'a.json' },
    // What a violation may quote: markup, quotes, a control character and a lone surrogate.
    {
      name: 'b.json',
      suite: 'story.context',
      durationMs: 8,
      outcome: 'failed',
      message: '400 schema.type',
      details: 'schema.type /x: "<\u0001\uD800>" & more',
    },
    { name: 'c.json', suite: 'unknown', durationMs: 0, outcome: 'error', message: 'the bus could not be reached' },
  ],
};

describe('junitXml', () => {
  it('is well-formed XML a JUnit parser reads: suites by name, a failure and an error with their messages', async () => {
    const parsed = (await parseJunit(junitXml(report))) as {
      name: string;
      tests: number;
      failures: number;
      errors: number;
      testsuite: Array<{
        name: string;
        tests: number;
        testcase: Array<{ name: string; time: number; failure?: Array<{ message: string; inner: string }>; error?: unknown[] }>;
      }>;
    };
    expect(parsed).toMatchObject({ name: 'suite <one>', tests: 3, failures: 1, errors: 1 });
    expect(parsed.testsuite.map((s) => [s.name, s.tests])).toEqual([
      ['story.context', 2],
      ['unknown', 1],
    ]);
    const [passed, failed] = parsed.testsuite[0]?.testcase ?? [];
    expect(passed).toMatchObject({ name: 'a.json', time: 0.012 });
    expect(passed?.failure).toBeUndefined();
    expect(failed?.failure?.[0]).toEqual({ message: '400 schema.type', inner: 'schema.type /x: "<\uFFFD\uFFFD>" & more' });
    expect(parsed.testsuite[1]?.testcase[0]?.error).toHaveLength(1);
  });
});

describe('ctrfJson', () => {
  it("passes CTRF's own schema and parser, an error counted as other", () => {
    const document = ctrfJson(report);
    expect(validateCtrf(document)).toMatchObject({ valid: true });
    const parsed = parseCtrf(JSON.stringify(document));
    expect(parsed.results.summary).toMatchObject({ tests: 3, passed: 1, failed: 1, other: 1, start: 1795932000000, stop: 1795932001500 });
    expect(parsed.results.tests.map((t) => [t.name, t.status, t.duration])).toEqual([
      ['a.json', 'passed', 12],
      ['b.json', 'failed', 8],
      ['c.json', 'other', 0],
    ]);
  });
});
