import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startNodeProcess } from '@bus/testing';
import type { RunningBus } from './bus';

/**
 * A document's walk-through, run as a reader runs it: its ```sh blocks marked
 * `<!-- walkthrough: <name> -->` pasted, in order, into one bash (errexit, nounset, pipefail) in a
 * checkout whose `.local/` holds what `npm run up` writes there for a bus of the test's own: the demo
 * tenant (.local/demo.env, by the very seed.js `npm run up` runs) and the operator's busctl variables
 * (.local/operator.env). test/readme.test.ts runs the README's, test/testing-tools-walkthrough.test.ts
 * docs/testing-tools.md's.
 */
const SECTION_MARK = '@@walkthrough@@ ';

export interface Walkthrough {
  /** The shell's exit code (null when it was killed at the timeout). */
  code: number | null;
  /** What each block printed on stdout, by its name. */
  sections: Record<string, string>;
  stderr: string;
}

/** The marked blocks of a document, in order. */
export function walkthroughBlocks(markdown: string): Array<{ name: string; commands: string }> {
  return [...markdown.matchAll(/^<!-- walkthrough: ([a-z-]+) -->\n```sh\n([\s\S]*?)^```$/gm)].map((m) => ({ name: m[1] as string, commands: m[2] as string }));
}

/** A checkout beside the real one: every top-level entry linked, except `.local/`, which is its own. */
function checkoutWithOwnLocal(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bus-walkthrough-'));
  for (const entry of readdirSync(REPO_ROOT)) {
    if (entry !== '.local' && entry !== '.git') symlinkSync(path.join(REPO_ROOT, entry), path.join(dir, entry));
  }
  mkdirSync(path.join(dir, '.local'));
  return dir;
}

/**
 * A checkout whose `.local/` holds what `npm run up` writes for `bus`: the demo tenant (seed.js) and
 * busctl's variables. `startOutput` is what the bus and seed.js printed; `demoEnv` the demo tenant's variables.
 */
export async function walkthroughCheckout(bus: RunningBus): Promise<{ checkout: string; startOutput: string; demoEnv: Record<string, string> }> {
  const checkout = checkoutWithOwnLocal();
  const seed = startNodeProcess('services/all-in-one/dist/seed.js', {
    ...bus.env,
    PORTAL_URL: bus.portalUrl,
    BUS_DEMO_ENV_FILE: path.join(checkout, '.local/demo.env'),
  });
  if ((await seed.exited) !== 0) throw new Error(`seed.js failed:\n${seed.output()}`);
  const demoEnv = Object.fromEntries(
    readFileSync(path.join(checkout, '.local/demo.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  writeFileSync(
    path.join(checkout, '.local/operator.env'),
    `BUSCTL_URL=${bus.portalUrl}\nBUSCTL_CLIENT_ID=${bus.env.OPERATOR_CLIENT_ID}\nBUSCTL_CLIENT_SECRET=${bus.env.OPERATOR_CLIENT_SECRET}\n`,
    { mode: 0o600 },
  );
  return { checkout, startOutput: `${bus.process.output()}${seed.output()}`, demoEnv };
}

/** Runs the blocks in one bash in `cwd`, with the environment of a new terminal, killed after `timeoutMs`; stdout split per block. */
export function runInShell(cwd: string, blocks: Array<{ name: string; commands: string }>, timeoutMs: number): Promise<Walkthrough> {
  const script = ['set -euo pipefail', ...blocks.flatMap((b) => [`printf '\\n${SECTION_MARK}%s\\n' '${b.name}'`, b.commands])].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd },
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      const sections: Record<string, string> = {};
      for (const part of stdout.split(`\n${SECTION_MARK}`).slice(1)) {
        const newline = part.indexOf('\n');
        sections[part.slice(0, newline)] = part.slice(newline + 1);
      }
      resolve({ code, sections, stderr });
    });
  });
}

/** The shell's failure as an error naming the block it stopped in, with what that block printed; undefined when it exited 0. */
export function walkthroughFailure(ran: Walkthrough): Error | undefined {
  if (ran.code === 0) return undefined;
  const failedIn = Object.keys(ran.sections).at(-1) ?? '(none)';
  return new Error(
    `the walk-through's shell exited with ${ran.code} in block "${failedIn}"\n--- its stdout:\n${ran.sections[failedIn] ?? ''}\n--- stderr:\n${ran.stderr}`,
  );
}
