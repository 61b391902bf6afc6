import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '@bus/testing';

// One ESLint instance (test/support/lint-server.mjs) lints every case: starting the CLI per case
// took over a minute on a loaded machine.
let server: ChildProcessWithoutNullStreams;
const pending = new Map<number, (messages: string[]) => void>();
let nextId = 0;

beforeAll(() => {
  server = spawn(process.execPath, [path.join(REPO_ROOT, 'test/support/lint-server.mjs')], { cwd: REPO_ROOT });
  createInterface({ input: server.stdout }).on('line', (line) => {
    const { id, messages } = JSON.parse(line) as { id: number; messages: string[] };
    pending.get(id)?.(messages);
    pending.delete(id);
  });
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  server.on('exit', (code) => {
    for (const [id, answer] of pending) {
      answer([`lint server exited (${code}): ${stderr}`]);
      pending.delete(id);
    }
  });
  // The first lint loads ESLint, its plugins and the config: done here, so no case's timeout counts it
  // on a loaded machine.
  return violations('libs/som/src/warm-up.ts', 'export {};\n');
}, 60_000);

afterAll(() => {
  server.stdin.end();
});

/** Lints `code` with the project's config as if it were the file at `file` (relative to the repo): "rule: message" per problem. */
function violations(file: string, code: string): Promise<string[]> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    server.stdin.write(`${JSON.stringify({ id, file, code })}\n`);
  });
}

describe('import boundaries (docs/architecture.md#layout), enforced by npm run lint', () => {
  it.each(['pg', 'kafkajs', 'express', 'node:fs'])('refuses %s in a pure lib', async (mod) => {
    expect(await violations('libs/som/src/example.ts', `import x from '${mod}';\nexport const y = x;\n`)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*This lib is pure/),
    ]);
  });

  it('allows the same import in a service', async () => {
    expect(await violations('services/gateway/src/example.ts', `import x from 'pg';\nexport const y = x;\n`)).toEqual([]);
  });

  it.each([
    ['services/gateway/src/example.ts', '@bus/http/src/app'],
    ['services/gateway/src/example.ts', '@bus/som/dist/index'],
    ['services/gateway/src/example.ts', '../../libs/http/src/app'],
  ])('refuses a deep import from %s of %s', async (file, target) => {
    expect(await violations(file, `import { x } from '${target}';\nexport const y = x;\n`)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*never its src\/ or dist\//),
    ]);
  });

  it.each(['@bus/identity', '@bus/portal', '@bus/db'])('refuses %s in busctl, which talks HTTP only', async (target) => {
    expect(await violations('cli/busctl/src/example.ts', `import { x } from '${target}';\nexport const y = x;\n`)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*busctl talks to the bus over HTTP/),
    ]);
  });

  it.each(['@bus/client', '@bus/som'])('allows busctl %s: the HTTP client library and the pure SOM rules', async (target) => {
    expect(await violations('cli/busctl/src/example.ts', `import { x } from '${target}';\nexport const y = x;\n`)).toEqual([]);
  });

  it("allows busctl's tests the packages that check it against the admin document", async () => {
    expect(await violations('cli/busctl/src/example.test.ts', `import { x } from '@bus/testing';\nexport const y = x;\n`)).toEqual([]);
  });

  it('refuses a service import in a lib', async () => {
    expect(await violations('libs/http/src/example.ts', `import { x } from '@bus/gateway';\nexport const y = x;\n`)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*A lib never imports a service/),
    ]);
  });

  it.each([
    ['libs/limits/src/example.ts', '@bus/http', /libs\/limits sits below http/],
    ['libs/http/src/example.ts', '@bus/som', /libs\/http sits below .*som/],
    ['libs/som/src/example.ts', '@bus/http', /libs\/som is pure: it imports only pure libs/],
    ['libs/queue/src/example.ts', '@bus/identity', /libs\/queue sits below identity/],
  ])('refuses in %s a lib above it or an impure one: %s', async (file, target, message) => {
    expect(await violations(file, `import { x } from '${target}';\nexport const y = x;\n`)).toEqual([expect.stringMatching(message)]);
  });

  it('allows a lib below, and the shared contracts anywhere', async () => {
    expect(await violations('libs/identity/src/example.ts', `import { x } from '@bus/http';\nexport const y = x;\n`)).toEqual([]);
    expect(await violations('libs/som/src/example.ts', `import { x } from '@bus/contracts';\nexport const y = x;\n`)).toEqual([]);
  });

  it('refuses a service importing another service, even in its main.ts, except in the all-in-one or a test', async () => {
    const code = `import { x } from '@bus/delivery';\nexport const y = x;\n`;
    const refused = [expect.stringMatching(/^no-restricted-imports: .*A service never imports another service/)];
    expect(await violations('services/portal/src/example.ts', code)).toEqual(refused);
    expect(await violations('services/portal/src/main.ts', code)).toEqual(refused);
    // The portal's pages are components (.tsx): held to the same boundaries.
    expect(await violations('services/portal/src/people/example.tsx', `${code}export const Page = () => <p>{y}</p>;\n`)).toEqual(refused);
    expect(await violations('services/all-in-one/src/example.ts', code)).toEqual([]);
    expect(await violations('services/pull-api/src/example.int.test.ts', code)).toEqual([]);
  });
});

describe('waits in tests, enforced by npm run lint', () => {
  const sleep = 'export async function f() {\n  await new Promise((resolve) => setTimeout(resolve, 100));\n}\n';

  it.each([
    'test/example.test.ts',
    'test/support/example.ts',
    'test/fixtures/example.js',
    'services/gateway/src/example.int.test.ts',
    'libs/testing/src/example.ts',
  ])('refuses a setTimeout sleep in %s', async (file) => {
    expect(await violations(file, sleep)).toEqual([expect.stringMatching(/^no-restricted-syntax: Tests wait on a condition with eventually\(\)/)]);
  });

  it('refuses the promise timers and setInterval in a test', async () => {
    const code =
      "import { setTimeout as pause } from 'node:timers/promises';\nexport const f = () => pause(1);\nexport const g = () => globalThis.setInterval(() => undefined, 5);\n";
    expect(await violations('test/example.test.ts', code)).toEqual([
      expect.stringMatching(/^no-restricted-syntax: /),
      expect.stringMatching(/^no-restricted-syntax: /),
    ]);
  });

  it('allows the timer of eventually itself, product code, and a deliberate pause that says why', async () => {
    expect(await violations('libs/testing/src/eventually.ts', sleep)).toEqual([]);
    expect(await violations('services/gateway/src/example.ts', sleep)).toEqual([]);
    const deliberate = sleep.replace('  await', '  // eslint-disable-next-line no-restricted-syntax -- a simulated slow consumer\n  await');
    expect(await violations('test/example.test.ts', deliberate)).toEqual([]);
  });
});
