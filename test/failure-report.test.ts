import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '@bus/testing';

/**
 * The tiers' jest environment (test/support/environment.js), run by jest itself on a fixture: a failed
 * test's report carries what the processes it started logged at warning level or worse during it.
 */
describe("a failed test's report", () => {
  const fixture = 'test/support/fixtures/fails-after-a-logged-error.fixture.ts';
  let results: { testResults: Array<{ assertionResults: Array<{ title: string; status: string; failureMessages: string[] }> }> };

  beforeAll(() => {
    const config = {
      rootDir: REPO_ROOT,
      testMatch: [`<rootDir>/${fixture}`],
      testEnvironment: '<rootDir>/test/support/environment.js',
      transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } }] },
      moduleNameMapper: { '^@bus/testing$': '<rootDir>/libs/testing/src/index.ts' },
      // As jest.config.js: .local/ holds copies of the packages (the cluster tier's image layers).
      modulePathIgnorePatterns: ['<rootDir>/.local/'],
    };
    const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/jest/bin/jest.js'), '--config', JSON.stringify(config), '--json', '--ci'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    results = JSON.parse(run.stdout) as typeof results;
  }, 90_000);

  const outcome = (title: string) => results.testResults[0]!.assertionResults.find((r) => r.title === title)!;

  it("carries the error the test's process logged during the test, and not its info lines or what it logged before", () => {
    const failed = outcome('fails after its process logged an error');
    expect(failed.status).toBe('failed');
    const report = failed.failureMessages.join('\n');
    expect(report).toContain('the answer it expected');
    expect(report).toContain('test/support/fixtures/logging-process.js: {"level":"error"');
    expect(report).toContain('the cause the report shows');
    expect(report).not.toContain('an info line the report leaves out');
    expect(report).not.toContain('a warning from before the test');
  });

  it('leaves a passing test as it was', () => {
    expect(outcome('passes after its process logged an error')).toMatchObject({ status: 'passed', failureMessages: [] });
  });
});
