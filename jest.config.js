// Tiers (docs/architecture.md#layout): unit tests beside the code (pure, no servers), integration tests of one package
// against the real Postgres/Redis/Kafka (*.int.test.ts), end-to-end tests in test/ that drive running
// services over HTTP, and the fault and fuzz tiers in test/faults and test/fuzz. `npm test` runs them
// all; deploy/local/run-tests.sh starts the servers first. Workspace packages resolve to their TypeScript sources, so tests need no build.
// The tiers that start bus processes run in test/support/environment.js: a failed test's report also
// shows what those processes logged at warning level or worse while it ran.
const swcWith = (jsc) => ['@swc/jest', { jsc: { target: 'es2023', ...jsc }, module: { type: 'commonjs' }, sourceMaps: 'inline' }];
const swc = swcWith({ parser: { syntax: 'typescript' } });
// The portal's pages are Preact components (.tsx), compiled as tsc compiles them (services/portal/tsconfig.json).
const swcTsx = swcWith({ parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic', importSource: 'preact' } } });

/** @bus/<name> → libs/<name>/src or services/<name>/src (names are unique across both). */
const fs = require('node:fs');
const path = require('node:path');
const mapped = {};
for (const group of ['libs', 'services']) {
  for (const name of fs.readdirSync(path.join(__dirname, group))) {
    if (fs.existsSync(path.join(__dirname, group, name, 'src', 'index.ts'))) {
      mapped[`^@bus/${name}$`] = `<rootDir>/${group}/${name}/src/index.ts`;
    }
  }
}

const shared = {
  transform: { '^.+\\.tsx$': swcTsx, '^.+\\.(t|j|mj)s$': swc },
  // jose, openid-client, oauth2-mock-server and preact ship ESM only; jest's CommonJS runtime needs them transformed too.
  transformIgnorePatterns: ['/node_modules/(?!(jose|openid-client|oauth4webapi|oauth2-mock-server|basic-auth|junit2json|preact)/)'],
  moduleNameMapper: mapped,
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // .local/ holds caches with copies of this repository's packages (the cluster tier's image layers)
  // and foreign snapshot files (Go modules): never part of the module map.
  modulePathIgnorePatterns: ['<rootDir>/.local/'],
  testEnvironment: 'node',
};

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/{libs,services,cli}/*/src/**/*.test.{ts,tsx}'],
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, '\\.int\\.test\\.ts$'],
    },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services}/*/src/**/*.int.test.ts'],
      setupFiles: ['<rootDir>/test/support/load-stack-env.js'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testEnvironment: '<rootDir>/test/support/environment.js',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [...shared.testPathIgnorePatterns, '<rootDir>/test/(faults|fuzz|cluster|browser)/'],
      setupFiles: ['<rootDir>/test/support/load-stack-env.js'],
    },
    // Fault suite (`npm run test:faults`): a bus on servers of its own, which it kills and restarts.
    {
      ...shared,
      displayName: 'faults',
      testEnvironment: '<rootDir>/test/support/environment.js',
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/load-stack-env.js'],
    },
    // API fuzzing (`npm run test:fuzz`): schemathesis against the served OpenAPI documents.
    {
      ...shared,
      displayName: 'fuzz',
      testEnvironment: '<rootDir>/test/support/environment.js',
      testMatch: ['<rootDir>/test/fuzz/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/load-stack-env.js'],
    },
    // The portal in a real browser (`npm test` runs it last): Debian's chromium driven by playwright-core.
    {
      ...shared,
      displayName: 'browser',
      testEnvironment: '<rootDir>/test/support/environment.js',
      testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/load-stack-env.js'],
    },
    // The cluster tier (`npm run test:cluster`): the chart on a real single-node Kubernetes cluster that
    // deploy/cluster/test.sh starts, installs into and tears down; it sets the environment these read.
    {
      ...shared,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
    },
  ],
};
