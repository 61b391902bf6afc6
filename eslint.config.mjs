// Lint rules that carry the architecture (DESIGN §2): pure libs import no I/O clients, no package
// reaches into another's src/ or dist/, no lib imports a service, and the CLI imports no bus package.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const IO_MODULES = ['pg', 'knex', 'kafkajs', 'ioredis', 'express', 'rate-limiter-flexible', 'node:http', 'node:https', 'node:net', 'node:fs', 'node:child_process', 'http', 'https', 'net', 'fs', 'child_process'];
const PURE_LIBS = ['libs/config', 'libs/som', 'libs/skills', 'libs/tokens'];

// A timer in a test is a sleep or a hand-made poll: setTimeout/setInterval however reached, or node:timers/promises.
const SLEEPS = [
  "CallExpression[callee.name=/^set(Timeout|Interval)$/]",
  "CallExpression[callee.property.name=/^set(Timeout|Interval)$/]",
  "ImportDeclaration[source.value=/^(node:)?timers.promises$/]",
  "CallExpression[callee.name='require'][arguments.0.value=/^(node:)?timers.promises$/]",
];
const SLEEP_MESSAGE = 'Tests wait on a condition with eventually() from @bus/testing, never on a timer.';

const deepImports = {
  group: ['@bus/*/*', '../../libs/**', '../../services/**', '**/../*/src/**', '@bus/*/dist/**'],
  message: 'Import another package by its name (@bus/<name>), never its src/ or dist/ files.',
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.local/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [deepImports] }],
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [deepImports, { group: ['@bus/auth', '@bus/gateway', '@bus/delivery', '@bus/pull-api', '@bus/catalogue', '@bus/portal', '@bus/all-in-one'], message: 'A lib never imports a service.' }],
      }],
    },
  },
  {
    files: PURE_LIBS.map((lib) => `${lib}/src/**/*.ts`),
    ignores: ['**/*.int.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: IO_MODULES.map((name) => ({ name, message: 'This lib is pure (input → result): no I/O clients or servers. Do the I/O in a service and pass data in.' })),
        patterns: [deepImports],
      }],
    },
  },
  {
    // busctl is a client of the admin API's HTTP contract, like any operator script: it imports no
    // bus package, so it cannot come to depend on the portal's internals.
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [deepImports, { group: ['@bus/*'], message: 'busctl talks to the admin API over HTTP; it imports no bus package.' }],
      }],
    },
  },
  {
    // The client library is published on its own: it depends on nothing of the bus's but its HTTP contract.
    files: ['libs/client/src/**/*.ts'],
    ignores: ['libs/client/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [deepImports, { group: ['@bus/*'], message: 'libs/client is published alone: it talks to the bus over HTTP and imports no bus package.' }],
      }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests wait on conditions, never on sleeps (issue 13): a fixed pause either hopes the event came
    // (flaky) or waits longer than needed (slow). The one loop that paces reads is eventually's; a
    // deliberate pause (a simulated slow consumer) says why in an eslint-disable comment.
    files: ['**/*.test.ts', 'test/**/*.ts', 'test/**/*.js', 'libs/testing/src/**/*.ts'],
    ignores: ['libs/testing/src/eventually.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...SLEEPS.map((selector) => ({ selector, message: SLEEP_MESSAGE }))],
    },
  },
);
