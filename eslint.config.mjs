// Lint rules that carry the architecture (docs/architecture.md#layout): pure libs import no I/O clients, no package
// reaches into another's src/ or dist/, no lib imports a service or a lib above it, no service imports
// another (the all-in-one excepted), and the CLI imports no bus package.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const IO_MODULES = [
  'pg',
  'knex',
  'kafkajs',
  'ioredis',
  'express',
  'rate-limiter-flexible',
  'node:http',
  'node:https',
  'node:net',
  'node:fs',
  'node:child_process',
  'http',
  'https',
  'net',
  'fs',
  'child_process',
];
const PURE_LIBS = ['contracts', 'config', 'som', 'skills', 'tokens'];

// The libs' layering, lowest first: a lib imports only libs before it, and a pure lib only pure ones
// (README "Layout" says the same). The infrastructure (observability … http) knows no SOM rule or token;
// libs/testing and libs/client stand outside it: they import no bus lib.
const LIB_LAYERS = ['contracts', 'config', 'observability', 'kafka', 'db', 'limits', 'http', 'tokens', 'som', 'skills', 'queue', 'identity', 'composition'];
const SERVICES = readdirSync(new URL('./services', import.meta.url));
// Tests may use another service to produce their fixtures (a gateway's publish for delivery's tests).
const TESTS = ['**/*.test.{ts,tsx}'];

// A timer in a test is a sleep or a hand-made poll: setTimeout/setInterval however reached, or node:timers/promises.
const SLEEPS = [
  'CallExpression[callee.name=/^set(Timeout|Interval)$/]',
  'CallExpression[callee.property.name=/^set(Timeout|Interval)$/]',
  'ImportDeclaration[source.value=/^(node:)?timers.promises$/]',
  "CallExpression[callee.name='require'][arguments.0.value=/^(node:)?timers.promises$/]",
];
const SLEEP_MESSAGE = 'Tests wait on a condition with eventually() from @bus/testing, never on a timer.';

const deepImports = {
  group: ['@bus/*/*', '../../libs/**', '../../services/**', '**/../*/src/**', '@bus/*/dist/**'],
  message: 'Import another package by its name (@bus/<name>), never its src/ or dist/ files.',
};
const noServices = { group: SERVICES.map((name) => `@bus/${name}`), message: 'A lib never imports a service.' };
const pureLibPaths = IO_MODULES.map((name) => ({
  name,
  message: 'This lib is pure (input → result): no I/O clients or servers. Do the I/O in a service and pass data in.',
}));

/** A lib's code: no service, no lib above it in LIB_LAYERS, and no I/O client if it is pure. */
function libBoundaries(lib) {
  const pure = PURE_LIBS.includes(lib);
  const above = LIB_LAYERS.slice(LIB_LAYERS.indexOf(lib) + 1);
  const impureBelow = pure ? LIB_LAYERS.slice(0, LIB_LAYERS.indexOf(lib)).filter((name) => !PURE_LIBS.includes(name)) : [];
  const layering = {
    group: above.map((name) => `@bus/${name}`),
    message: `libs/${lib} sits below ${above.join(', ')} (LIB_LAYERS in eslint.config.mjs): it may not import them.`,
  };
  const purity = { group: impureBelow.map((name) => `@bus/${name}`), message: `libs/${lib} is pure: it imports only pure libs (${PURE_LIBS.join(', ')}).` };
  return {
    files: [`libs/${lib}/src/**/*.{ts,tsx}`],
    ignores: TESTS,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...(pure ? { paths: pureLibPaths } : {}),
          patterns: [deepImports, noServices, ...(above.length > 0 ? [layering] : []), ...(impureBelow.length > 0 ? [purity] : [])],
        },
      ],
    },
  };
}

/** A service's code imports no other service: what two services share lives in a lib. */
function serviceBoundaries(service) {
  const others = SERVICES.filter((name) => name !== service).map((name) => `@bus/${name}`);
  return {
    files: [`services/${service}/src/**/*.{ts,tsx}`],
    ignores: TESTS,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            deepImports,
            {
              group: others,
              message: 'A service never imports another service: share a lib (libs/contracts for an interface), and let a composition root wire them.',
            },
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.local/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        require: 'readonly',
        module: 'writable',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [deepImports] }],
    },
  },
  {
    // Lint that sees types: a promise nobody awaits or catches loses its error (and, in a
    // handler, the request's order of events); a promise where a void callback is expected (an express
    // handler, an event listener) escapes the error middleware; a switch over a union that misses a
    // member silently does nothing for it. Tests too: an un-awaited assertion passes whatever happens.
    files: ['libs/*/src/**/*.{ts,tsx}', 'services/*/src/**/*.{ts,tsx}', 'cli/*/src/**/*.{ts,tsx}', 'test/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { requireDefaultForNonUnion: true }],
    },
  },
  {
    // Libs' tests may build a harness from a lib above (a devDependency), never from a service.
    files: ['libs/**/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImports, noServices] }] },
  },
  {
    files: PURE_LIBS.map((lib) => `libs/${lib}/src/**/*.test.{ts,tsx}`),
    ignores: ['**/*.int.test.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: pureLibPaths, patterns: [deepImports, noServices] }] },
  },
  ...LIB_LAYERS.map(libBoundaries),
  // The all-in-one is the one composition root that runs every service in one process.
  ...SERVICES.filter((name) => name !== 'all-in-one').map(serviceBoundaries),
  {
    // busctl is a client of the bus's HTTP contracts, like any operator or producer script: it imports
    // no service's internals. It may use the published client library (itself HTTP only) and the pure
    // SOM rules (`validate --ordered` judges a story with the gateway's own sequence rules). Its tests
    // may use more: they check busctl against the OpenAPI documents (@bus/schemas, @bus/testing).
    files: ['cli/**/*.{ts,tsx}'],
    ignores: TESTS,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            deepImports,
            {
              group: ['@bus/*', '!@bus/client', '!@bus/som'],
              message: 'busctl talks to the bus over HTTP; it imports only @bus/client and the pure @bus/som.',
            },
          ],
        },
      ],
    },
  },
  {
    // The client library is published on its own: it depends on nothing of the bus's but its HTTP contract.
    files: ['libs/client/src/**/*.{ts,tsx}'],
    ignores: ['libs/client/src/**/*.test.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [deepImports, { group: ['@bus/*'], message: 'libs/client is published alone: it talks to the bus over HTTP and imports no bus package.' }],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests wait on conditions, never on sleeps: a fixed pause either hopes the event came
    // (flaky) or waits longer than needed (slow). The one loop that paces reads is eventually's; a
    // deliberate pause (a simulated slow consumer) says why in an eslint-disable comment.
    files: [...TESTS, 'test/**/*.{ts,tsx}', 'test/**/*.js', 'libs/testing/src/**/*.{ts,tsx}'],
    ignores: ['libs/testing/src/eventually.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...SLEEPS.map((selector) => ({ selector, message: SLEEP_MESSAGE }))],
    },
  },
);
