import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command run to its end, its output collected; killed at `timeout` rather than left to the test's, so a hang still shows what it printed. */
export function runCommand(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeout: number }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], options);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
